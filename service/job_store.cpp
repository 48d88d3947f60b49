#include "service/job_store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "core/cluster_keys.hpp"
#include "core/error.hpp"

namespace troupe::service {
namespace {

constexpr int schema_version = 1;

// No CHECK on state: the set of states is the code's to validate, and a new state should not
// need a schema migration. The name CHECK is a backstop behind the check in add().
constexpr const char* schema_sql = R"sql(
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL CHECK (name <> ''), priority INTEGER NOT NULL, state TEXT NOT NULL,
  source TEXT NOT NULL, yaml TEXT NOT NULL, sets TEXT NOT NULL, job_index INTEGER NOT NULL,
  submitted_at REAL NOT NULL, updated_at REAL NOT NULL, report_json TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '');
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE TABLE events (
  id INTEGER PRIMARY KEY, job TEXT NOT NULL REFERENCES jobs (id), at REAL NOT NULL,
  event TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX events_by_job ON events (job, id);
PRAGMA user_version = 1;
)sql";

constexpr const char* job_columns = R"sql(
SELECT id, seq, name, priority, state, source, yaml, sets, job_index, submitted_at, updated_at,
       report_json, error, reason,
       (SELECT count(*) FROM events e WHERE e.job = jobs.id AND e.event = 'start')
FROM jobs WHERE )sql";

// Carries SQLite's result code so that opening can tell "not a database" (the user's file is
// wrong) from other failures, while every caller can still catch it as a runtime_failure.
class sqlite_error : public runtime_failure {
 public:
  sqlite_error(const std::string& what, int c) : runtime_failure(what), code(c) {}
  int code;
};

[[noreturn]] void fail(sqlite3* db, const std::string& path, const std::string& what) {
  throw sqlite_error(path + ": " + what + ": " + sqlite3_errmsg(db), sqlite3_errcode(db));
}

void exec(sqlite3* db, const std::string& path, const char* sql, const std::string& what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, path, what);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class stmt {
 public:
  stmt(sqlite3* db, const std::string& path, std::string what, const std::string& sql)
      : db_(db), path_(path), what_(std::move(what)) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) fail(db, path, what_);
  }
  ~stmt() { sqlite3_finalize(s_); }
  stmt(const stmt&) = delete;
  stmt& operator=(const stmt&) = delete;

  stmt& text(int i, const std::string& v) {
    // TRANSIENT: the strings bound are often temporaries that die before step().
    return check(sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  stmt& i64(int i, std::int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  stmt& real(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }

  // True while there is a row to read.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail(db_, path_, what_);
    return false;
  }
  bool has_parameters() const { return sqlite3_bind_parameter_count(s_) > 0; }

  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, col))) : "";
  }
  std::int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  double real(int col) const { return sqlite3_column_double(s_, col); }

 private:
  stmt& check(int rc) {
    if (rc != SQLITE_OK) fail(db_, path_, what_);
    return *this;
  }
  sqlite3* db_;
  const std::string& path_;
  std::string what_;
  sqlite3_stmt* s_ = nullptr;
};

// BEGIN IMMEDIATE takes the write lock up front, so a transaction that reads then writes (add's
// next seq) cannot be overtaken by another process between the two.
class transaction {
 public:
  transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) {
    exec(db, path, "BEGIN IMMEDIATE", "starting a transaction");
  }
  ~transaction() {
    // Some errors (e.g. disk full) already rolled back; a second ROLLBACK would only fail.
    if (!done_ && !sqlite3_get_autocommit(db_))
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  void commit() {
    exec(db_, path_, "COMMIT", "committing");
    done_ = true;
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  bool done_ = false;
};

// nlohmann refuses invalid UTF-8; that is the caller's input, not a runtime failure.
std::string json_array(const std::vector<std::string>& v, const std::string& what) {
  try {
    return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const nlohmann::json::exception&) {
    throw input_error(what + " is not valid UTF-8");
  }
}

void check_state(const std::string& state, const std::string& job) {
  const auto& all = job_states();
  if (std::find(all.begin(), all.end(), state) == all.end())
    throw input_error("job '" + job + "': unknown state '" + state + "'");
}

void insert_event(sqlite3* db, const std::string& path, const std::string& id, double at,
                  const std::string& event, const std::string& detail) {
  stmt q(
      db, path, "recording event '" + event + "' of job '" + id + "'",
      "INSERT INTO events (job, at, event, detail) SELECT id, ?2, ?3, ?4 FROM jobs WHERE id = ?1");
  q.text(1, id).real(2, at).text(3, event).text(4, detail).step();
  // Inserting through a SELECT turns an unknown id into "no row" instead of a foreign-key error.
  if (sqlite3_changes(db) == 0) throw input_error("no job '" + id + "'");
}

// Updates one job's row (?1 id, ?2 state, ?3 now; `bind` fills the rest) and records the state as
// an event, in one transaction so that the history never disagrees with the row.
template <class Bind>
void change(sqlite3* db, const std::string& path, const std::string& id, const std::string& state,
            const std::string& detail, const char* sql, Bind bind) {
  check_state(state, id);
  transaction t(db, path);
  const double now = now_s();
  stmt q(db, path, "updating job '" + id + "'", sql);
  bind(q.text(1, id).text(2, state).real(3, now));
  q.step();
  if (sqlite3_changes(db) == 0) throw input_error("no job '" + id + "'");
  insert_event(db, path, id, now, state, detail);
  t.commit();
}

}  // namespace

namespace {

// The highest SEQ among the NAME-SEQ ids that DIR/logs/*.log and DIR/checkpoints/* name, and one
// of those files (0 and "" when there are none).
std::pair<std::int64_t, std::string> earlier_jobs(const std::string& dir) {
  namespace fs = std::filesystem;
  std::pair<std::int64_t, std::string> out{0, ""};
  for (const char* sub : {"logs", "checkpoints"}) {
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(dir) / sub, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string id = it->path().filename().string();
      if (std::string(sub) == "logs") {
        if (it->path().extension() != ".log") continue;
        id = it->path().stem().string();
      }
      const auto dash = id.rfind('-');
      if (dash == std::string::npos || dash + 1 >= id.size() ||
          id.find_first_not_of("0123456789", dash + 1) != std::string::npos)
        continue;
      if (out.second.empty()) out.second = it->path().string();
      try {
        out.first = std::max<std::int64_t>(out.first, std::stoll(id.substr(dash + 1)));
      } catch (const std::exception&) {
        // A number too long for an id: not one of ours.
      }
    }
  }
  return out;
}

}  // namespace

job_store::job_store(const std::string& dir, bool reset) {
  namespace fs = std::filesystem;
  ensure_state_dir(dir);
  std::error_code ec;
  path_ = (fs::path(dir) / "troupe.db").string();
  // No database (missing or emptied) beside earlier jobs' files: a silent start from scratch
  // would reuse their ids.
  const bool no_database = !fs::exists(path_, ec) || fs::file_size(path_, ec) == 0;
  const auto earlier = no_database ? earlier_jobs(dir) : std::pair<std::int64_t, std::string>{};
  if (!earlier.second.empty() && !reset)
    throw input_error(path_ + ": " + (fs::exists(path_, ec) ? "empty" : "missing") +
                      ", but the state directory holds earlier jobs' files (" + earlier.second +
                      "); restore the database, or start with --reset to begin a new one that " +
                      "numbers jobs after them");
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw input_error(path_ + ": cannot open: " + msg);
  }
  try {
    // SQLite opens a file it may not write read-only, without a word: serve would start and
    // then answer every submission 503. Refused at the start instead.
    if (sqlite3_db_readonly(db_, "main") == 1)
      throw input_error(path_ + ": read-only; serve writes its state there (check the file's " +
                        "and the directory's permissions and attributes)");
    open_schema();
    // --reset over earlier jobs' files: their ids are never given again.
    if (earlier.first > 0) {
      transaction t(db_, path_);
      const auto sql = "INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', " +
                       std::to_string(earlier.first) + ")";
      exec(db_, path_, sql.c_str(), "numbering jobs after the earlier ones");
      t.commit();
    }
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

job_store::~job_store() {
  sqlite3_close_v2(db_);
}

void job_store::open_schema() {
  sqlite3_busy_timeout(db_, 5000);
  const auto read_int = [&](const char* sql, const char* what) {
    stmt q(db_, path_, what, sql);
    return q.step() ? q.i64(0) : 0;
  };
  std::int64_t version = 0;
  try {
    // The first read of the file: this is where a file that is not a database shows itself.
    version = read_int("PRAGMA user_version", "reading the schema version");
  } catch (const sqlite_error& e) {
    if (e.code == SQLITE_NOTADB || e.code == SQLITE_CORRUPT)
      throw input_error(path_ + ": not a troupe state database (" + sqlite3_errstr(e.code) + ")");
    throw;
  }
  // Refuse before touching the journal mode: a file we will not use must not be changed.
  if (version != 0 && version != schema_version)
    throw input_error(path_ + ": schema version " + std::to_string(version) +
                      ", this troupe reads version " + std::to_string(schema_version));
  if (version == 0 && read_int("SELECT count(*) FROM sqlite_master", "reading the schema") != 0)
    throw input_error(path_ + ": an SQLite database without a troupe schema version; " +
                      "not a troupe state database");

  {
    stmt q(db_, path_, "setting the journal mode", "PRAGMA journal_mode = WAL");
    const std::string mode = q.step() ? q.text(0) : "";
    if (mode != "wal")
      throw runtime_failure(path_ + ": cannot use the WAL journal (journal mode is '" + mode +
                            "'); is the directory on a network file system?");
  }
  exec(db_, path_, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", "setting pragmas");
  if (version == schema_version) {
    // A database damaged past its header (a page, a dropped table) is refused here, at the
    // start, as bad state (exit 2), before agents join and jobs are read from it.
    try {
      stmt check(db_, path_, "checking the database", "PRAGMA quick_check");
      const std::string verdict = check.step() ? check.text(0) : "no answer";
      if (verdict != "ok") {
        // quick_check's report is a line per problem; its first one says where.
        auto first = verdict.substr(0, verdict.find('\n', verdict.find("***") == 0 ? 30 : 0));
        std::replace(first.begin(), first.end(), '\n', ' ');
        throw input_error(path_ + ": damaged (" + first.substr(0, 200) + ")");
      }
      list();
    } catch (const sqlite_error& e) {
      throw input_error(std::string(e.what()) + " (a damaged troupe state database)");
    }
    return;
  }

  transaction t(db_, path_);
  // Another process may have created the schema between our read and our write lock.
  if (read_int("PRAGMA user_version", "reading the schema version") == 0) {
    exec(db_, path_, schema_sql, "creating the schema");
  }
  t.commit();
}

std::vector<stored_job> job_store::add(std::vector<stored_job> jobs) {
  std::lock_guard<std::mutex> lock(mu_);
  transaction t(db_, path_);
  std::int64_t next = 0;
  {
    // AUTOINCREMENT's high-water mark, so a seq is not reused even if jobs are ever deleted.
    stmt q(db_, path_, "reading the next job number",
           "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0), "
           "coalesce((SELECT max(seq) FROM jobs), 0))");
    next = q.step() ? q.i64(0) + 1 : 1;
  }
  const double now = now_s();
  for (auto& j : jobs) {
    // Checked inside the transaction on purpose: a bad job rolls back the jobs before it.
    if (j.name.empty())
      throw input_error(j.source + ": job " + std::to_string(j.index) + " has an empty name");
    if (j.state.empty()) j.state = "queued";
    check_state(j.state, j.name);
    const std::string sets = json_array(j.sets, j.source + ": job '" + j.name + "': a --set");
    j.seq = next++;
    j.id = j.name + "-" + std::to_string(j.seq);
    j.submitted_at = j.updated_at = now;
    j.starts = 0;
    stmt ins(db_, path_, "adding job '" + j.id + "'",
             "INSERT INTO jobs (seq, id, name, priority, state, source, yaml, sets, job_index, "
             "submitted_at, updated_at, report_json, error, reason) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12, ?13)");
    ins.i64(1, j.seq).text(2, j.id).text(3, j.name).i64(4, j.priority).text(5, j.state);
    ins.text(6, j.source).text(7, j.yaml).text(8, sets).i64(9, j.index).real(10, now);
    ins.text(11, j.report_json).text(12, j.error).text(13, j.reason).step();
    insert_event(db_, path_, j.id, now, "submitted", j.source);
  }
  t.commit();
  return jobs;
}

void job_store::set_state(const std::string& id, const std::string& state,
                          const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  change(db_, path_, id, state, reason,
         "UPDATE jobs SET state = ?2, updated_at = ?3, reason = ?4 WHERE id = ?1",
         [&](stmt& q) { q.text(4, reason); });
}

void job_store::finish(const std::string& id, const std::string& state,
                       const std::string& report_json, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  change(db_, path_, id, state, error,
         "UPDATE jobs SET state = ?2, updated_at = ?3, report_json = ?4, error = ?5, reason = '' "
         "WHERE id = ?1",
         [&](stmt& q) { q.text(4, report_json).text(5, error); });
}

void job_store::add_event(const std::string& id, const std::string& event,
                          const std::string& detail) {
  if (event.empty()) throw input_error("job '" + id + "': an event needs a name");
  std::lock_guard<std::mutex> lock(mu_);
  insert_event(db_, path_, id, now_s(), event, detail);
}

std::vector<stored_job> job_store::select_jobs(const char* where, const std::string& arg) const {
  stmt q(db_, path_, "reading jobs", std::string(job_columns) + where + " ORDER BY seq");
  if (q.has_parameters()) q.text(1, arg);
  std::vector<stored_job> out;
  while (q.step()) {
    stored_job j;
    j.id = q.text(0);
    j.seq = q.i64(1);
    j.name = q.text(2);
    j.priority = static_cast<int>(q.i64(3));
    j.state = q.text(4);
    j.source = q.text(5);
    j.yaml = q.text(6);
    try {
      j.sets = nlohmann::json::parse(q.text(7)).get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      throw runtime_failure(path_ + ": job '" + j.id + "': stored --set list: " + e.what());
    }
    j.index = static_cast<int>(q.i64(8));
    j.submitted_at = q.real(9);
    j.updated_at = q.real(10);
    j.report_json = q.text(11);
    j.error = q.text(12);
    j.reason = q.text(13);
    j.starts = q.i64(14);
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<stored_job> job_store::get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = select_jobs("id = ?1", id);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<stored_job> job_store::list() const {
  std::lock_guard<std::mutex> lock(mu_);
  return select_jobs("1", "");
}

std::vector<stored_job> job_store::in_states(const std::vector<std::string>& states) const {
  std::lock_guard<std::mutex> lock(mu_);
  // One fixed statement for any number of states: the list travels as one JSON parameter.
  return select_jobs("state IN (SELECT value FROM json_each(?1))",
                     json_array(states, "a job state asked for"));
}

std::vector<stored_event> job_store::events(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  stmt q(db_, path_, "reading the events of job '" + id + "'",
         "SELECT id, job, at, event, detail FROM events WHERE job = ?1 ORDER BY id");
  q.text(1, id);
  std::vector<stored_event> out;
  while (q.step()) out.push_back({q.i64(0), q.text(1), q.real(2), q.text(3), q.text(4)});
  return out;
}

}  // namespace troupe::service
