#pragma once
// The state of `troupe serve`, kept in one SQLite file (DIR/troupe.db) so that a daemon that
// crashes or is restarted finds its queue, its finished reports and the history of every job.
//
// Why these choices:
// - SQLite with WAL and synchronous=FULL: a committed submission or state change survives a power
//   cut, and readers (e.g. `troupe status` opening the file) never block the daemon's writer.
// - A submission is one transaction, so a crash never leaves half of a multi-job file queued.
// - seq is never reused (AUTOINCREMENT keeps the high-water mark even if rows are ever deleted),
//   so an id such as "mlp-3" names one submission for the lifetime of the file.
// - The schema version lives in PRAGMA user_version; a file of another version is refused rather
//   than guessed at, because a daemon that misreads its queue would run the wrong jobs.
// - One connection behind one mutex: the load is a few writes per job, far below what a single
//   connection serves, and it keeps sqlite3_errmsg() tied to the call that failed.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace troupe::service {

// The states a job may be in; anything else is refused with input_error.
inline const std::vector<std::string>& job_states() {
  static const std::vector<std::string> states = {"queued", "running",   "paused",     "completed",
                                                  "failed", "cancelled", "interrupted"};
  return states;
}

struct stored_job {
  std::string id;        // "NAME-SEQ" (e.g. "mlp-3"), assigned by add()
  std::int64_t seq = 0;  // submission order, 1, 2, 3..., assigned by add(), never reused
  std::string name;      // the job's name in its file
  int priority = 0;
  std::string state;              // one of job_states()
  std::string source;             // the submitted file's name (for messages)
  std::string yaml;               // the submitted file's text
  std::vector<std::string> sets;  // --set overrides as submitted (a JSON array in the file)
  int index = 0;                  // which entry of `jobs:` in that file
  double submitted_at = 0;        // unix seconds
  double updated_at = 0;
  std::string report_json;  // the job's report once it ended ("" before)
  std::string error;        // why it failed or was cancelled
  std::string reason;       // why it waits (queued/paused), "" otherwise
  std::int64_t starts = 0;  // how many "start" events it has (from the events table)
};

struct stored_event {
  std::int64_t id = 0;  // increases in the order recorded
  std::string job;
  double at = 0;  // unix seconds
  std::string event;
  std::string detail;
};

// Thread-safe. Errors: troupe::input_error for a bad file, directory, job id, name or state;
// troupe::runtime_failure("PATH: what: sqlite's message") for any other SQLite failure.
class job_store {
 public:
  // Opens or creates DIR/troupe.db, creating DIR (mode 0700) if needed. A new or empty file gets
  // schema version 1; a file of version 1 is used as is; another version, a file that is not an
  // SQLite database, or an unversioned database that already has tables is refused.
  // A missing or empty database in a directory that holds earlier jobs' logs or checkpoints
  // (DIR/logs/ID.log, DIR/checkpoints/ID/) is refused too: starting over would number new jobs
  // from 1 again, and a new job would take an old one's log and checkpoints. With `reset` it is
  // made anew, numbering jobs after the highest id those files name.
  explicit job_store(const std::string& dir, bool reset = false);
  ~job_store();
  job_store(const job_store&) = delete;
  job_store& operator=(const job_store&) = delete;

  // Adds the jobs of one submission, all or none, assigning seq, id, the timestamps and state
  // "queued" unless a state is given, and records a "submitted" event per job (detail = source).
  // An empty name or an unknown state is an input_error. Returns the jobs as stored.
  std::vector<stored_job> add(std::vector<stored_job> jobs);
  // Sets the state and reason, recording an event (event = state, detail = reason).
  void set_state(const std::string& id, const std::string& state, const std::string& reason = "");
  // Ends a job: state, report_json, error, reason cleared, and an event (detail = error).
  void finish(const std::string& id, const std::string& state, const std::string& report_json,
              const std::string& error);
  // Any other event ("start" with "fresh" or "resumed from step 40", "failure", "restart", ...).
  void add_event(const std::string& id, const std::string& event, const std::string& detail);

  std::optional<stored_job> get(const std::string& id) const;
  std::vector<stored_job> list() const;  // every job, by seq
  std::vector<stored_job> in_states(const std::vector<std::string>& states) const;  // by seq
  std::vector<stored_event> events(const std::string& id) const;  // in the order recorded
  const std::string& path() const { return path_; }

 private:
  void open_schema();
  std::vector<stored_job> select_jobs(const char* where, const std::string& arg) const;

  std::string path_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;
};

}  // namespace troupe::service
