#pragma once
// Fault injection from the command line: `--inject SPEC` text <-> config::fault_config, and the
// random fault plans of `--fault-soak N`. The YAML `faults:` list (config/README.md)
// fills the same struct; this is its one-word-per-fault spelling.
//
// Grammar (no spaces anywhere; numbers are plain decimals, no sign or exponent):
//
//   spec      = kill | hang | slow | delay | drop | partition | oom | device-error
//   kill      = "kill:"      device "@" step [ ":" phase ]    the worker process/thread dies
//   oom       = "oom:"       device "@" step                  the device runs out of memory
//   device-error = "device-error:" device "@" step            the device reports an error
//   hang      = "hang:"      device "@" step [ "+" seconds ]  stops answering; no +SECONDS (or
//                                                             +0) means until it is handled
//   slow      = "slow:"      device "x" factor "@" window     compute stretched by factor >= 1
//   delay     = "delay:"     device "+" ms "@" ( step | window )   its messages held back MS ms
//   drop      = "drop:"      device "@" step                  its step result is lost once
//   partition = "partition:" group "@" window                 the whole group unreachable
//   phase     = "compute" | "reduce" | "apply" | "eval"   where in the step (default compute;
//               reduce: before it joins the step's reduction, apply: after it, before
//               applying; eval: as it evaluates the final model, the step being the job's
//               step count)
//   device    = group "/" index
//   group     = 1*( ALPHA | DIGIT | "_" | "-" | "." )        a cluster group's name
//   index     = 1*DIGIT                                      device index in the group
//   step      = 1*DIGIT
//   window    = step "-" [ step ]        FIRST-LAST inclusive (LAST >= FIRST); FIRST- to the end
//   factor, seconds, ms = 1*DIGIT [ "." 1*DIGIT ]
//
// Examples: kill:cpu/1@50  kill:cpu/1@50:reduce  hang:gpu/0@10+2.5  slow:cpu/1x3@10-40
// slow:cpu/0x1.5@100-
//           delay:cpu/2+200@30  delay:cpu/2+50@30-35  drop:sim/0@12  partition:remote@20-30
//
// Mapping onto fault_config: `delay` MS becomes `seconds` = MS/1000; a window fills `until_step`
// (-1 for "to the end"); `delay` at a single step sets until_step = step, so that on the command
// line a delay without a window affects one step. kill, hang and drop fire once and leave
// until_step at -1. A group alone is a target only for `partition`, and partition only takes a
// group: a single device cut off is what `hang` is for.
//
// Errors are troupe::input_error quoting the flag and the text, the 1-based column, and a caret:
//
//   --inject 'slow:cpu/1x@10-40': column 12: expected FACTOR (a number >= 1) after 'x', found '@'
//     slow:cpu/1x@10-40
//                ^
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"

namespace troupe::config {

// Parses one spec. `flag` names where it came from in messages ("--inject"). Checks the syntax
// and the value ranges only; use check_fault_target for the cluster.
fault_config parse_fault(const std::string& text, const std::string& flag = "--inject");

// The canonical spec of `f` (parse_fault(fault_to_string(f)) == f for every parseable f). For
// the report and logs. Throws troupe::input_error for a struct no spec can express (an unknown
// action, a window on a kill, a partition of one device).
std::string fault_to_string(const fault_config& f);

// The target's group must be defined in `cluster` and a device index must be below its count.
// Throws troupe::input_error quoting `text` (the spec, for the message) and naming the groups.
void check_fault_target(const fault_config& f, const cluster_config& cluster,
                        const std::string& text, const std::string& flag = "--inject");

// What `--fault-soak N` draws from.
struct fault_space {
  std::vector<std::pair<std::string, int>> groups;  // group name, device count (>= 1)
  std::int64_t first_step = 0;                      // faults fire in [first_step, last_step]
  std::int64_t last_step = 0;
  // Actions to draw, uniformly. partition is left out by default: with one group it would cut
  // off the whole job, which a soak that must finish cannot survive.
  std::vector<fault_action> kinds = {fault_action::kill, fault_action::hang, fault_action::slow,
                                     fault_action::delay, fault_action::drop};
  double max_hang_seconds = 2.0;  // a bounded hang lasts U(0.1, max); half the hangs are unbounded
  double max_slow_factor = 4.0;   // slow: U(1.5, max)
  double max_delay_ms = 200.0;    // delay: U(1, max)
  std::int64_t max_window = 20;   // slow, delay, partition windows span 1..max_window steps
};

// N faults drawn from `space` by troupe::rng(seed): the same seed gives the same list on every
// platform. Sorted by step (then by draw order). Values are rounded to two decimals so that
// fault_to_string prints them exactly. Throws troupe::input_error on an empty space (no groups,
// no kinds, last_step < first_step, a count < 1).
std::vector<fault_config> random_faults(std::size_t n, std::uint64_t seed,
                                        const fault_space& space);

}  // namespace troupe::config
