#include "core/config_load.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "core/config_map_view.hpp"
#include "core/config_yaml.hpp"
#include "core/dependency_cycle.hpp"
#include "core/error.hpp"
#include "core/idx_files.hpp"
#include "core/job_rules.hpp"

namespace troupe::config {

namespace {

using detail::at_least_one;
using detail::child_path;
using detail::context;
using detail::index_path;
using detail::map_view;
using detail::non_negative;
using detail::positive;
using detail::range;
using detail::unit_closed;
using detail::unit_open;

// Names of what is defined so far, for "did you mean" on references.
std::string suggestion(const std::string& word, const std::vector<std::string>& names) {
  const auto near = detail::closest(word, names);
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

group_config read_group(const context& cx, const YAML::Node& n, const std::string& path) {
  group_config g;
  const map_view v(cx, n, path);
  v.name("name", g.name);
  v.enumeration("device", g.device);
  v.integer("count", g.count, at_least_one);
  v.integer("threads", g.threads, at_least_one);
  v.number("weight", g.weight, positive);
  const bool sim = g.device == device_kind::sim;
  v.only_with("base", sim, "device: sim");
  v.only_with("slowdown", sim, "device: sim");
  v.enumeration("base", g.base, {device_kind::cpu, device_kind::cuda});
  v.number("slowdown", g.slowdown, at_least_one);
  v.only_with("row_seconds", sim, "device: sim");
  v.number("row_seconds", g.row_seconds, positive);
  v.only_with("shared", sim || g.device == device_kind::cuda, "device: sim or cuda");
  v.boolean("shared", g.shared);
  v.enumeration("process", g.process);
  v.only_with("layer_split", g.device == device_kind::cuda, "device: cuda");
  std::string split = "off";
  v.str("layer_split", split);
  if (split == "auto") {
    g.layer_split = -2;
  } else if (split != "off") {
    const bool digits = !split.empty() && split.size() < 4 &&
                        split.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      v.fail("layer_split", "must be off, auto or a number of layers, got '" + split + "'");
    g.layer_split = std::stoi(split);
  }
  if (g.layer_split != -1 && g.shared)
    v.fail("layer_split", "a shared GPU runs whole models (leave layer_split off)");
  if (g.process != group_process::local && (g.device == device_kind::cuda || g.shared))
    v.fail("process", std::string(g.shared ? "a shared" : "a cuda") +
                          " group computes in the control process (process: local)");
  return g;
}

cluster_config read_cluster(const context& cx, const map_view& root) {
  cluster_config c;
  root.require("cluster");
  const map_view v(cx, root.node("cluster"), "cluster");
  v.enumeration("shares", c.shares);
  v.number("share_period", c.share_period, positive);
  v.number("share_floor", c.share_floor, unit_open);
  v.require("groups");
  const auto groups = v.node("groups");
  cx.check_seq(groups, "cluster.groups");
  if (groups.size() == 0) v.fail("groups", "must define at least one group");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto p = index_path("cluster.groups", i);
    auto g = read_group(cx, groups[i], p);
    for (std::size_t j = 0; j < c.groups.size(); ++j)
      if (c.groups[j].name == g.name)
        cx.fail(
            groups[i]["name"], child_path(p, "name"),
            "group name '" + g.name + "' is already used by " + index_path("cluster.groups", j));
    c.groups.push_back(std::move(g));
  }
  return c;
}

std::vector<std::string> group_names(const cluster_config& c) {
  std::vector<std::string> names;
  for (const auto& g : c.groups) names.push_back(g.name);
  return names;
}

void read_data(const map_view& v, data_config& d) {
  v.enumeration("dataset", d.dataset);
  const bool synthetic = d.dataset == dataset_kind::synthetic;
  v.only_with("path", !synthetic, "dataset: fashion-mnist, idx or csv");
  v.str("path", d.path);
  if (d.path.empty() && (d.dataset == dataset_kind::idx || d.dataset == dataset_kind::csv))
    v.fail("path", std::string("required for dataset: ") + name_of(d.dataset));
  if (d.dataset == dataset_kind::fashion_mnist && d.path.empty())
    d.path = default_fashion_mnist_path;
  v.strings("preprocess", d.preprocess);
  v.enumeration("split", d.split);
  v.only_with("leave_out", d.split == split_kind::adaptive, "split: adaptive");
  v.boolean("leave_out", d.leave_out);
  v.enumeration("mode", d.mode);
  v.number("neighbour_exchange", d.neighbour_exchange, unit_open);
  const bool sharded = d.mode == data_mode::sharded;
  if (d.neighbour_exchange > 0 && !sharded)
    v.fail("neighbour_exchange", "only applies with mode: sharded");
  if (const auto p = v.sub("priority")) {
    priority_config pc;
    p->number("alpha", pc.alpha, non_negative);
    p->number("beta", pc.beta, unit_closed);
    d.priority = pc;
  }
  // Shards are cut once by the start-up weights and sampled in place: an adaptive split or a
  // priority draw over the whole set would have to move samples between shards every step.
  if (sharded && d.split == split_kind::adaptive)
    v.fail("mode", "mode: sharded takes its split from the shards; use split: even or weighted");
  if (sharded && d.priority)
    v.fail("mode", "mode: sharded cannot be combined with priority (it draws from the whole set)");
  v.only_with("synthetic", synthetic, "dataset: synthetic");
  if (const auto s = v.sub("synthetic")) {
    s->enumeration("kind", d.generator);
    s->integer("samples", d.synthetic_samples, at_least_one);
  }
}

void read_optimizer(const map_view& v, optimizer_config& o) {
  v.enumeration("kind", o.kind);
  v.number("lr", o.lr, positive);
  v.number("momentum", o.momentum, unit_open);
  v.boolean("nesterov", o.nesterov);
  v.number("beta1", o.beta1, unit_open);
  v.number("beta2", o.beta2, unit_open);
  v.number("eps", o.eps, positive);
  v.number("weight_decay", o.weight_decay, non_negative);
  v.enumeration("form", o.form);
}

void read_sync(const context& cx, const map_view& v, sync_config& s) {
  v.enumeration("mode", s.mode);
  v.only_with("ps_shards", s.mode == sync_mode::ps, "sync mode: ps");
  v.integer("ps_shards", s.ps_shards, at_least_one);
  v.only_with("block", s.mode != sync_mode::local, "sync mode: ps or allreduce");
  v.integer("block", s.block, at_least_one);
  v.only_with("period", s.mode == sync_mode::local, "sync mode: local");
  v.only_with("codec", s.mode == sync_mode::allreduce, "sync mode: allreduce");
  v.str("codec", s.codec);
  if (s.codec == "none") s.codec.clear();
  if (v.has("period")) {
    const auto n = v.node("period");
    s.adaptive_period = n.IsScalar() && n.Scalar() == "adaptive";
    if (!s.adaptive_period) {
      const bool number = n.IsScalar() && n.Tag() != "!" && !n.Scalar().empty() &&
                          n.Scalar().find_first_not_of("+-0123456789") == std::string::npos;
      if (!number)
        cx.fail(n, v.path("period"),
                "must be a positive integer or \"adaptive\", got " + detail::describe(n));
      s.period = v.integer_of<std::int64_t>(n, v.path("period"), at_least_one);
    }
  }
}

fault_config read_fault(const context& cx, const YAML::Node& n, const std::string& path,
                        const cluster_config& cluster) {
  fault_config f;
  const map_view v(cx, n, path);
  v.require("step");
  v.integer("step", f.step, non_negative);
  v.require("action");
  v.enumeration("action", f.action);
  v.require("target");
  v.str("target", f.target);
  // GROUP or GROUP/INDEX: the group must exist and the device index must be within its count.
  const auto slash = f.target.find('/');
  const std::string group = f.target.substr(0, slash);
  const auto g = std::find_if(cluster.groups.begin(), cluster.groups.end(),
                              [&](const group_config& c) { return c.name == group; });
  if (g == cluster.groups.end())
    v.fail("target", "group '" + group + "' is not defined in cluster.groups (defined: " +
                         join(group_names(cluster)) + ")" +
                         suggestion(group, group_names(cluster)));
  if (slash != std::string::npos) {
    const std::string idx = f.target.substr(slash + 1);
    const bool ok = !idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos &&
                    idx.size() < 9 && std::stoi(idx) < g->count;
    if (!ok)
      v.fail("target", "device index '" + idx + "' is not in group '" + group + "' (count " +
                           std::to_string(g->count) + ")");
  }
  v.number("factor", f.factor, at_least_one);
  v.number("seconds", f.seconds, non_negative);
  v.integer("until_step", f.until_step, range{-1, false});
  v.enumeration("phase", f.phase);
  if (f.phase != fault_phase::compute && f.action != fault_action::kill)
    v.fail("phase", std::string("only a kill takes a phase (reduce, apply or eval); ") +
                        name_of(f.action) + " fires where the worker computes");
  if (f.until_step != -1 && f.until_step < f.step)
    v.fail("until_step", "must be -1 (no end) or >= step " + std::to_string(f.step) + ", got " +
                             std::to_string(f.until_step));
  return f;
}

job_config read_job(const context& cx, const YAML::Node& n, const std::string& path,
                    const cluster_config& cluster, const std::string& checkpoint_root) {
  job_config j;
  const map_view v(cx, n, path);
  v.name("name", j.name);
  v.integer("priority", j.priority, range{});
  if (v.has("after")) j.after = cx.as_string_list(v.node("after"), v.path("after"), true);
  if (const auto m = v.sub("model")) {
    m->str("kind", j.model.kind);
    // Any non-empty kind: embedding apps register their own; the runtime's registry checks it.
    if (j.model.kind.empty()) m->fail("kind", "must not be empty");
    if (m->has("hidden")) {
      const auto h = m->node("hidden");
      cx.check_seq(h, m->path("hidden"));
      j.model.hidden.clear();
      for (std::size_t i = 0; i < h.size(); ++i)
        j.model.hidden.push_back(
            m->integer_of<std::size_t>(h[i], index_path(m->path("hidden"), i), at_least_one));
    }
    const bool cnn = j.model.kind == "cnn";
    m->only_with("conv_layers", cnn, "kind: cnn");
    m->only_with("kernel", cnn, "kind: cnn");
    m->integer("conv_layers", j.model.conv_layers, non_negative);
    m->integer("kernel", j.model.kernel, at_least_one);
    if (j.model.kernel % 2 == 0)
      m->fail("kernel", "must be odd ('same' padding), got " + std::to_string(j.model.kernel));
    // conv_layers counts leading entries of hidden (the cnn default has 3 when hidden is empty).
    const std::size_t widths = j.model.hidden.empty() ? 3 : j.model.hidden.size();
    if (j.model.conv_layers > widths)
      m->fail("conv_layers", "must be at most the " + std::to_string(widths) +
                                 " entries of hidden, got " + std::to_string(j.model.conv_layers));
  }
  if (const auto d = v.sub("data")) {
    read_data(*d, j.data);
  } else {
    j.data.path = default_fashion_mnist_path;
  }
  if (const auto o = v.sub("optimizer")) read_optimizer(*o, j.optimizer);
  v.integer("batch", j.batch, positive);
  v.integer("epochs", j.epochs, at_least_one);
  v.integer("max_steps", j.max_steps, at_least_one);
  v.number("max_seconds", j.max_seconds, positive);
  if (const auto s = v.sub("sync")) read_sync(cx, *s, j.sync);

  if (v.has("resources")) {
    // Either `resources: [a, b]` or `resources: {groups: [a, b]}`; the map form leaves room for
    // future demands (device counts, memory) without breaking the list form.
    YAML::Node list = v.node("resources");
    std::string lpath = v.path("resources");
    if (list.IsMap()) {
      const map_view r(cx, list, lpath);
      r.require("groups");
      list = r.node("groups");
      lpath = r.path("groups");
    }
    j.resources = cx.as_string_list(list, lpath, true);
    const auto defined = group_names(cluster);
    for (std::size_t i = 0; i < j.resources.size(); ++i) {
      const auto& g = j.resources[i];
      const auto at = list.IsSequence() ? list[i] : list;
      const auto p = list.IsSequence() ? index_path(lpath, i) : lpath;
      if (std::find(defined.begin(), defined.end(), g) == defined.end())
        cx.fail(at, p,
                "group '" + g + "' is not defined in cluster.groups (defined: " + join(defined) +
                    ")" + suggestion(g, defined));
      if (std::find(j.resources.begin(), j.resources.begin() + i, g) != j.resources.begin() + i)
        cx.fail(at, p, "group '" + g + "' is listed twice");
    }
  }
  v.enumeration("placement", j.placement);
  v.integer("seed", j.seed, non_negative);
  v.boolean("deterministic", j.deterministic);
  v.boolean("preemptible", j.preemptible);
  v.number("share", j.share, positive);
  if (const auto c = v.sub("checkpoint")) {
    c->str("dir", j.checkpoint.dir);
    c->integer("every_steps", j.checkpoint.every_steps, non_negative);
    c->number("every_seconds", j.checkpoint.every_seconds, non_negative);
    if (!checkpoint_root.empty()) j.checkpoint.dir = checkpoint_root;
    if ((j.checkpoint.every_steps > 0 || j.checkpoint.every_seconds > 0) &&
        j.checkpoint.dir.empty())
      c->fail("dir", "required when every_steps or every_seconds is set");
  }
  if (v.has("faults")) {
    const auto fs = v.node("faults");
    cx.check_seq(fs, v.path("faults"));
    for (std::size_t i = 0; i < fs.size(); ++i)
      j.faults.push_back(read_fault(cx, fs[i], index_path(v.path("faults"), i), cluster));
  }
  if (const auto s = v.sub("supervision")) {
    s->integer("max_restarts", j.max_restarts, non_negative);
    s->number("restart_window", j.restart_window, positive);
    s->number("hang_floor_s", j.hang_floor_s, positive);
    for (const auto& kv : s->self()) {
      const std::string key = kv.first.Scalar();
      if (key == "max_restarts" || key == "restart_window" || key == "hang_floor_s") continue;
      // The schema's key list has admitted only failure class names here.
      j.supervision[*parse_name<failure_class>(key)] =
          cx.as_enum<failure_policy>(kv.second, s->path(key));
    }
  }
  if (const auto e = v.sub("elastic")) {
    j.elastic.emplace();
    e->integer("min_devices", j.elastic->min_devices, at_least_one);
    e->integer("max_devices", j.elastic->max_devices, at_least_one);
  }
  // A service keeps every job's checkpoints under its state directory, so that a restarted or
  // preempted job finds them.
  if (!checkpoint_root.empty()) {
    j.checkpoint.dir = checkpoint_root;
    j.checkpoint.at_stop = true;
  }
  if (j.preemptible) j.checkpoint.at_stop = true;
  if (const auto r = job_rule_violation(j)) {
    if (r->section.empty()) v.fail(r->key, r->what);
    if (const auto s = v.sub(r->section)) s->fail(r->key, r->what);
    v.fail(r->section, r->what);
  }
  return j;
}

// `after:` edges: every name must be a job, and the graph must be acyclic (a job in a cycle would
// wait forever). The message spells the cycle out: a -> b -> a.
void check_dependencies(const context& cx, const std::vector<job_config>& jobs,
                        const YAML::Node& jobs_node, const std::vector<std::string>& known) {
  std::vector<std::string> names;
  for (const auto& j : jobs) names.push_back(j.name);
  const auto after_at = [&](std::size_t i, std::size_t k) {
    const YAML::Node a = jobs_node[i]["after"];
    return a.IsSequence() ? std::pair{a[k], index_path(index_path("jobs", i) + ".after", k)}
                          : std::pair{a, index_path("jobs", i) + ".after"};
  };
  std::vector<std::vector<std::size_t>> edges(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    for (std::size_t k = 0; k < jobs[i].after.size(); ++k) {
      const auto& dep = jobs[i].after[k];
      const auto it = std::find(names.begin(), names.end(), dep);
      // A job the service already has: no edge within this file, so no cycle through it.
      if (it == names.end() && std::find(known.begin(), known.end(), dep) != known.end()) continue;
      if (it == names.end()) {
        const auto [n, p] = after_at(i, k);
        cx.fail(n, p,
                "job '" + dep + "' is not defined in jobs (defined: " + join(names) + ")" +
                    suggestion(dep, names));
      }
      edges[i].push_back(static_cast<std::size_t>(it - names.begin()));
    }
  const auto cycle = find_cycle(edges);
  if (!cycle) return;
  std::string text;
  for (const auto& hop : *cycle) text += jobs[hop.node].name + " -> ";
  text += jobs[cycle->front().node].name;
  // Blame the entry that leaves the cycle's first job: the message then reads from the job the
  // user looks at first (`a -> b -> a` at a's after).
  const auto [n, p] = after_at(cycle->front().node, cycle->front().edge);
  cx.fail(n, p, "dependency cycle: " + text);
}

// Last, after the structure is known good: a typo in a key is a better first message than the
// missing dataset it causes.
void check_dataset(const context& cx, const job_config& j, const YAML::Node& job_node,
                   const std::string& path) {
  namespace fs = std::filesystem;
  const auto& d = j.data;
  if (d.dataset == dataset_kind::synthetic) return;
  const YAML::Node data = job_node["data"];
  const YAML::Node at = data.IsDefined() && data["path"].IsDefined() ? data["path"]
                        : data.IsDefined()                           ? data
                                                                     : job_node;
  const auto p = path + ".data.path";
  const std::string whose =
      data.IsDefined() && data["path"].IsDefined()
          ? ""
          : std::string(" (the default for dataset ") + name_of(d.dataset) + ")";
  std::error_code ec;
  if (d.dataset == dataset_kind::csv) {
    if (!fs::is_regular_file(d.path, ec)) cx.fail(at, p, "dataset file not found: " + d.path);
    return;
  }
  if (!fs::is_directory(d.path, ec))
    cx.fail(at, p, "dataset directory not found: " + d.path + whose);
  for (const auto& f : idx_file_names()) {
    const auto file = fs::path(d.path) / f;
    if (find_idx_file(d.path, f).empty())
      cx.fail(at, p, "dataset file not found: " + file.string() + " (or .gz)" + whose);
  }
}

// A --set of jobs.N.sync.mode switches the mode of a file written for another one: the file's
// keys of the old mode (ps_shards for ps, period for local) are then leftovers, not mistakes, so
// they are dropped with a note instead of failing the run. The same key written by the file next
// to a mode it does not apply to, or given by a --set, still fails (only_with in read_sync).
void drop_keys_left_by_mode_set(const YAML::Node& jobs, const std::vector<std::string>& set_paths,
                                const std::string& source, std::vector<std::string>& notes) {
  if (!jobs.IsDefined() || !jobs.IsSequence()) return;
  const auto was_set = [&](const std::string& p) {
    return std::find(set_paths.begin(), set_paths.end(), p) != set_paths.end();
  };
  static const std::pair<const char*, const char*> mode_keys[] = {
      {"ps_shards", "ps"}, {"period", "local"}, {"codec", "allreduce"}};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string sync_path = index_path("jobs", i) + ".sync";
    if (!was_set(sync_path + ".mode")) continue;
    if (!jobs[i].IsMap()) continue;
    YAML::Node sync = jobs[i]["sync"];
    const YAML::Node& csync = sync;  // const lookups: never insert a key
    if (!csync.IsDefined() || !csync.IsMap() || !csync["mode"].IsDefined() ||
        !csync["mode"].IsScalar())
      continue;
    const std::string mode = csync["mode"].Scalar();
    for (const auto& [key, key_mode] : mode_keys) {
      if (mode == key_mode || !csync[key].IsDefined() || was_set(sync_path + "." + key)) continue;
      const YAML::Node left = csync[key];
      const std::string value = left.IsScalar() ? left.Scalar() : "...";
      const std::string line =
          left.Mark().is_null() ? "" : ":" + std::to_string(left.Mark().line + 1);
      notes.push_back(source + line + ": " + sync_path + "." + key + " (" + value +
                      ") only applies with sync mode: " + key_mode + "; unused with mode: " + mode +
                      " (set by --set)");
      sync.remove(key);
    }
  }
}

}  // namespace

const std::vector<std::string>& idx_file_names() {
  static const std::vector<std::string> names = {
      "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
      "t10k-labels-idx1-ubyte"};
  return names;
}

namespace {

// The YAML tree of a file, or an input_error at its line and column.
YAML::Node load_yaml(const std::string& yaml_text, const std::string& source_name) {
  try {
    return YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw input_error(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
  }
}

// What a service adds to a jobs-only file: its cluster, the jobs it already has (`after:` may name
// them) and where it keeps checkpoints. Null for a whole config.
struct service_view {
  const cluster_config& cluster;
  const std::vector<std::string>& known_jobs;
  const std::string& checkpoint_root;
};

run_config parse(const std::string& yaml_text, const std::string& source_name,
                 const std::vector<std::string>& sets, const service_view* service) {
  YAML::Node root = load_yaml(yaml_text, source_name);
  context cx(source_name);
  if (root.IsNull()) {
    // An empty file may still be completed by --set; without any, say what is missing.
    if (sets.empty())
      throw input_error(source_name + ":1: (top level): the config is empty; it needs " +
                        (service ? "jobs" : "cluster and jobs"));
    root = YAML::Node(YAML::NodeType::Map);
  }
  std::vector<std::string> set_paths;
  for (const auto& s : sets) {
    // Sets into a non-map root would be meaningless; check_map below names the real problem.
    if (!root.IsMap()) break;
    set_paths.push_back(detail::apply_set(root, source_name, s));
    cx.add_set(set_paths.back(), s);
  }

  run_config rc;
  rc.source = source_name;
  rc.sets = sets;
  if (root.IsMap()) {
    const YAML::Node& croot = root;
    drop_keys_left_by_mode_set(croot["jobs"], set_paths, source_name, rc.notes);
  }
  // After the sets and the keys they left unused: the tree the structs below are read from.
  YAML::Emitter as_run;
  as_run << root;
  rc.as_run = as_run.c_str();
  const map_view top(cx, root, "");
  if (service) {
    if (top.has("cluster"))
      top.fail("cluster",
               "a submitted file holds jobs only: the cluster is the service's (its groups: " +
                   join(group_names(service->cluster)) + ")");
    rc.cluster = service->cluster;
  } else {
    rc.cluster = read_cluster(cx, top);
  }
  static const std::vector<std::string> none;
  static const std::string no_root;
  top.require("jobs");
  const YAML::Node jobs = top.node("jobs");
  cx.check_seq(jobs, "jobs");
  if (jobs.size() == 0) top.fail("jobs", "must define at least one job");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto p = index_path("jobs", i);
    auto j = read_job(cx, jobs[i], p, rc.cluster, service ? service->checkpoint_root : no_root);
    for (std::size_t k = 0; k < rc.jobs.size(); ++k)
      if (rc.jobs[k].name == j.name)
        cx.fail(jobs[i]["name"], p + ".name",
                "job name '" + j.name + "' is already used by " + index_path("jobs", k));
    rc.jobs.push_back(std::move(j));
  }
  check_dependencies(cx, rc.jobs, jobs, service ? service->known_jobs : none);
  for (std::size_t i = 0; i < rc.jobs.size(); ++i)
    check_dataset(cx, rc.jobs[i], jobs[i], index_path("jobs", i));
  return rc;
}

}  // namespace

run_config parse_config(const std::string& yaml_text, const std::string& source_name,
                        const std::vector<std::string>& sets) {
  return parse(yaml_text, source_name, sets, nullptr);
}

run_config parse_jobs(const std::string& yaml_text, const std::string& source_name,
                      const std::vector<std::string>& sets, const cluster_config& cluster,
                      const std::vector<std::string>& known_jobs,
                      const std::string& checkpoint_root) {
  const service_view view{cluster, known_jobs, checkpoint_root};
  return parse(yaml_text, source_name, sets, &view);
}

cluster_config parse_cluster(const std::string& yaml_text, const std::string& source_name) {
  YAML::Node root = load_yaml(yaml_text, source_name);
  context cx(source_name);
  if (root.IsNull())
    throw input_error(source_name + ":1: (top level): the file is empty; it needs cluster");
  const map_view top(cx, root, "");
  if (top.has("jobs"))
    top.fail("jobs",
             "a service's cluster file holds the cluster only (submit jobs with troupe submit)");
  return read_cluster(cx, top);
}

run_config load_config(const std::string& path, const std::vector<std::string>& sets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path + ": cannot open config file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw input_error(path + ": cannot read config file");
  return parse_config(text.str(), path, sets);
}

}  // namespace troupe::config
