// The shell blocks of README.md and docs/*.md run here, so a quick start that no longer works
// fails `make test` instead of the first reader who pastes it. The convention the docs follow:
//
// - A fence opened by an unindented "```sh" line is runnable. If its first line is
//   `# illustration: REASON`, it is not run, and the test lists it (file, line, reason) in its
//   output. An indented ```sh fence (in a list item) must be an illustration: it would otherwise
//   look runnable and never run.
// - A fence labelled bash, shell, console (or zsh, shell-session), or an unlabelled one whose
//   first line starts with `troupe ` or `$ `, fails the test: shell is labelled `sh`, so that
//   nothing escapes the test by its label. Other labels (yaml, text, json, none) are prose.
// - The runnable blocks of one file run in file order, each as `bash -euo pipefail`, in one
//   scratch directory for the file: a block may use what an earlier one wrote, or stop a
//   server an earlier one started in the background (`cmd &`). The directory is also HOME; it
//   holds symlinks `config`, `examples`, `docs` and `tools` to the repository's folders;
//   `troupe` on PATH is the one built beside this test; no TROUPE_* variable comes through.
// - A line `# prints: TEXT` in a block requires TEXT in the block's stdout and stderr.
// - A block that exits non-zero, misses a `# prints:` or runs past its deadline fails with the
//   fence's file:line and the end of its output, and ends its file's run (later blocks depend
//   on it). Each block runs in a process group of its own; every group, and every process left
//   from them, is killed when the file's run ends.
// - README.md must have a runnable block: a quick start that vanished must not pass.
//
// TROUPE_DOCS_ROOT=DIR takes README.md, docs/ and the linked folders from DIR instead of the
// working directory (the repository root, under ctest), to try the rules on other markdown.
// TROUPE_DOCS_BLOCK_SECONDS changes the deadline of a block (180 s). TROUPE_KEEP_SCRATCH keeps
// the scratch directories.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/binary_support.hpp"

extern char** environ;

namespace fs = std::filesystem;
using namespace troupe::testing;

namespace {

struct expected_text {
  int line = 0;
  std::string text;
};

struct doc_block {
  int line = 0;              // of the opening fence, 1-based
  std::string illustration;  // the reason; empty for a runnable block
  std::string script;        // runnable: the block's text, at its own line numbers
  std::vector<expected_text> prints;
};

struct doc_error {
  int line = 0;
  std::string what;
};

struct doc_blocks {
  std::vector<doc_block> blocks;
  std::vector<doc_error> errors;
  int runnable() const {
    return static_cast<int>(std::count_if(
        blocks.begin(), blocks.end(), [](const doc_block& b) { return b.illustration.empty(); }));
  }
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* const illustration_tag = "# illustration:";
const char* const prints_tag = "# prints:";

// One fenced block, judged when it closes.
struct open_fence {
  int line = 0;
  size_t indent = 0;
  char mark = '`';
  size_t length = 0;
  std::string label;
  std::vector<std::string> body;
};

void judge(open_fence& f, doc_blocks& out) {
  const std::string first = f.body.empty() ? "" : trim(f.body.front());
  const bool shell_label = f.label == "bash" || f.label == "shell" || f.label == "console" ||
                           f.label == "zsh" || f.label == "shell-session";
  if (shell_label) {
    out.errors.push_back({f.line, "a ```" + f.label +
                                      " block: label shell blocks ```sh (run by this test, or "
                                      "first line `# illustration: REASON`)"});
    return;
  }
  if (f.label.empty()) {
    if (starts_with(first, "troupe ") || starts_with(first, "$ "))
      out.errors.push_back({f.line,
                            "an unlabelled block that reads as shell: label it ```sh (run by "
                            "this test, or first line `# illustration: REASON`), or ```text for "
                            "output"});
    return;
  }
  if (f.label != "sh") return;
  doc_block b;
  b.line = f.line;
  if (starts_with(first, illustration_tag)) {
    b.illustration = trim(first.substr(std::strlen(illustration_tag)));
    if (b.illustration.empty())
      out.errors.push_back({f.line, "`# illustration:` without a reason"});
    else
      out.blocks.push_back(b);
    return;
  }
  if (f.indent > 0) {
    out.errors.push_back({f.line,
                          "an indented ```sh block is never run: unindent its fence, or make its "
                          "first line `# illustration: REASON`"});
    return;
  }
  // The script's first lines stand in for the markdown's above the block, so that bash's
  // messages ("line 42: ...") give lines of the document; so does the ERR trap's, since under -e
  // a failing command such as `test` or `grep -q` ends the script without a word.
  b.script = "trap 'echo \"[docs] line $LINENO exited $?\" >&2' ERR";
  b.script.append(static_cast<size_t>(f.line), '\n');
  for (size_t i = 0; i < f.body.size(); ++i) {
    b.script += f.body[i] + "\n";
    const auto t = trim(f.body[i]);
    if (!starts_with(t, prints_tag)) continue;
    const int at = f.line + 1 + static_cast<int>(i);
    const auto text = trim(t.substr(std::strlen(prints_tag)));
    if (text.empty())
      out.errors.push_back({at, "`# prints:` without the text to look for"});
    else
      b.prints.push_back({at, text});
  }
  out.blocks.push_back(b);
}

// The fenced blocks of a markdown text (``` or ~~~ fences, CommonMark's pairing: a block closes
// at a fence of the same character at least as long, with nothing after it).
doc_blocks extract_blocks(const std::string& markdown) {
  doc_blocks out;
  std::istringstream in(markdown);
  std::string line;
  int n = 0;
  open_fence f;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) {
      if (inside) f.body.emplace_back();
      continue;
    }
    const char c = line[indent];
    const auto run = (c == '`' || c == '~') ? line.find_first_not_of(c, indent) : indent;
    const size_t length = (run == std::string::npos ? line.size() : run) - indent;
    if (inside) {
      if (c == f.mark && length >= f.length && trim(line.substr(indent + length)).empty()) {
        judge(f, out);
        inside = false;
      } else {
        // The block's own indentation (a list item's) is not part of its text.
        f.body.push_back(line.substr(std::min(indent, f.indent)));
      }
      continue;
    }
    if (length < 3) continue;
    f = open_fence{};
    f.line = n;
    f.indent = indent;
    f.mark = c;
    f.length = length;
    const auto info = trim(line.substr(indent + length));
    f.label = lower(info.substr(0, info.find_first_of(" \t{")));
    inside = true;
  }
  if (inside) out.errors.push_back({f.line, "a fence that never closes"});
  return out;
}

// ---------------------------------------------------------------------------------------------
// Running a file's blocks.

struct proc_entry {
  pid_t pid = 0;
  char state = '?';
};

// The processes whose parent is this one: the blocks' shells, and (this process being a child
// subreaper) whatever they left running when their parent exited.
std::vector<proc_entry> own_children() {
  std::vector<proc_entry> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(it->path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    proc_entry e;
    long ppid = 0;
    if (!(rest >> e.state >> ppid) || ppid != self) continue;
    e.pid = static_cast<pid_t>(std::stol(name));
    out.push_back(e);
  }
  return out;
}

struct block_result {
  int code = 0;    // the exit code
  int signal = 0;  // or the signal that ended it
  bool timed_out = false;
  double seconds = 0;
  std::string output;
};

std::string last_lines(const std::string& text, int count) {
  size_t at = text.size();
  if (at > 0 && text[at - 1] == '\n') --at;
  for (int i = 0; i < count && at != std::string::npos && at > 0; ++i)
    at = text.rfind('\n', at - 1);
  return (at == std::string::npos || at == 0) ? text : text.substr(at + 1);
}

// One markdown file's scratch directory and the process groups its blocks started.
class file_session {
 public:
  file_session(const fs::path& root, const fs::path& dir) : dir_(dir), work_(dir / "work") {
    fs::create_directories(work_);
    for (const char* name : {"config", "examples", "docs", "tools"})
      if (fs::is_directory(root / name)) fs::create_directory_symlink(root / name, work_ / name);
    env_ = block_environment();
  }
  ~file_session() {
    end();
    if (!std::getenv("TROUPE_KEEP_SCRATCH")) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }
  file_session(const file_session&) = delete;
  file_session& operator=(const file_session&) = delete;

  // Runs `script` (named `name` in bash's messages) and waits for it, at most `deadline_s`.
  block_result run(const std::string& name, int line, const std::string& script,
                   double deadline_s) {
    const auto meta = dir_ / ("block-" + std::to_string(line));
    fs::create_directories(meta);
    const auto script_path = meta / name;
    const auto out_path = meta / "output";
    std::ofstream(script_path) << script;

    std::vector<char*> envp;
    for (auto& e : env_) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string bash = fs::exists("/bin/bash") ? "/bin/bash" : "/usr/bin/bash";
    std::vector<std::string> words = {"bash", "-euo", "pipefail", script_path.string()};
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);

    const auto start = std::chrono::steady_clock::now();
    std::fflush(nullptr);  // else the child would write our buffered output again
    const pid_t pid = ::fork();
    if (pid == 0) {
      // A session of its own: its own process group, to kill at the file's end, and no
      // controlling terminal for a block to wait on.
      ::setsid();
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      for (int s = 1; s < 32; ++s)
        if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
      if (in < 0 || out < 0 || ::chdir(work_.c_str()) != 0) ::_exit(126);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      ::execve(bash.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    block_result r;
    if (pid < 0) {
      r.code = 127;
      r.output = std::string("fork failed: ") + std::strerror(errno);
      return r;
    }
    groups_.push_back(pid);
    const auto deadline = start + std::chrono::duration<double>(deadline_s);
    for (;;) {
      // WNOWAIT leaves the shell a zombie until the file ends: its pid, which names the
      // process group, cannot be reused by an unrelated group that the final kill would hit.
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        if (info.si_code == CLD_EXITED)
          r.code = info.si_status;
        else
          r.signal = info.si_status;
        break;
      }
      reap_others();
      if (!r.timed_out && std::chrono::steady_clock::now() > deadline) {
        r.timed_out = true;
        ::killpg(pid, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.output = read_file(out_path);
    return r;
  }

  // Kills every group a block started, then whatever else is left under this process, and
  // reaps it all.
  void end() {
    for (pid_t g : groups_) ::killpg(g, SIGKILL);
    groups_.clear();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      const auto children = own_children();
      if (children.empty() || std::chrono::steady_clock::now() > deadline) break;
      for (const auto& c : children) {
        if (c.state == 'Z') {
          ::waitpid(c.pid, nullptr, WNOHANG);
        } else {
          // A process that made a group of its own takes that group down with it.
          if (::getpgid(c.pid) == c.pid) ::killpg(c.pid, SIGKILL);
          ::kill(c.pid, SIGKILL);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  // Background processes whose block has ended are this process's children now; a stopped
  // server is reaped at once, so that a later block's `kill -0 PID` sees it gone.
  void reap_others() {
    for (const auto& c : own_children())
      if (c.state == 'Z' && std::find(groups_.begin(), groups_.end(), c.pid) == groups_.end())
        ::waitpid(c.pid, nullptr, WNOHANG);
  }

  // A user's shell: this environment without TROUPE_* (a test's state directory, a token) or
  // make's job-server flags, HOME in the scratch directory, the built `troupe` first on PATH.
  std::vector<std::string> block_environment() const {
    std::vector<std::string> env;
    std::string path = "/usr/local/bin:/usr/bin:/bin";
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      const auto name = kv.substr(0, kv.find('='));
      if (starts_with(name, "TROUPE_") || name == "HOME" || name == "PWD" || name == "OLDPWD" ||
          name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL")
        continue;
      if (name == "PATH") {
        path = kv.substr(5);
        continue;
      }
      env.push_back(kv);
    }
    env.push_back("PATH=" + troupe_binary().parent_path().string() + ":" + path);
    env.push_back("HOME=" + work_.string());
    env.push_back("PWD=" + work_.string());
    // A block that ends up running `make test` must not run the blocks again inside itself.
    env.push_back("TROUPE_DOCS_NESTED=1");
    return env;
  }

  fs::path dir_, work_;
  std::vector<std::string> env_;
  std::vector<pid_t> groups_;
};

double block_deadline_s() {
  const char* s = std::getenv("TROUPE_DOCS_BLOCK_SECONDS");
  return s && std::atof(s) > 0 ? std::atof(s) : 180.0;
}

// What one markdown file's blocks did; failures are reported as they happen.
struct file_summary {
  int run = 0, illustrations = 0, not_run = 0;
};

file_summary run_file(const fs::path& root, const fs::path& md, const fs::path& scratch) {
  const auto rel = fs::relative(md, root).string();
  const auto parsed = extract_blocks(read_file(md));
  for (const auto& e : parsed.errors) FAIL_CHECK(rel << ":" << e.line << ": " << e.what);

  auto dir_name = rel;
  std::replace(dir_name.begin(), dir_name.end(), '/', '_');
  const auto start = std::chrono::steady_clock::now();
  file_session session(root, scratch / dir_name);
  file_summary sum;
  bool stopped = false;
  for (const auto& b : parsed.blocks) {
    const auto where = rel + ":" + std::to_string(b.line);
    if (!b.illustration.empty()) {
      ++sum.illustrations;
      MESSAGE(where << ": illustration: " << b.illustration);
      continue;
    }
    if (stopped) {
      ++sum.not_run;
      continue;
    }
    ++sum.run;
    const auto r = session.run(md.filename().string(), b.line, b.script, block_deadline_s());
    const auto tail = "--- the last 40 lines of its output ---\n" + last_lines(r.output, 40);
    if (r.timed_out) {
      FAIL_CHECK(where << ": ran past its deadline of " << block_deadline_s()
                       << " s and was killed\n"
                       << tail);
      stopped = true;
    } else if (r.code != 0 || r.signal != 0) {
      FAIL_CHECK(where << ": "
                       << (r.signal ? "killed by signal " + std::to_string(r.signal)
                                    : "exited " + std::to_string(r.code))
                       << " after " << r.seconds << " s\n"
                       << tail);
      stopped = true;
    } else {
      for (const auto& p : b.prints) {
        if (r.output.find(p.text) != std::string::npos) continue;
        FAIL_CHECK(rel << ":" << p.line << ": the output of the block at line " << b.line
                       << " lacks \"" << p.text << "\"\n"
                       << tail);
        stopped = true;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(rel << ": " << sum.run << " blocks run, " << sum.illustrations << " illustrations"
              << (sum.not_run ? ", " + std::to_string(sum.not_run) + " not run after a failure"
                              : std::string())
              << " (" << seconds << " s)");
  return sum;
}

}  // namespace

TEST_CASE("docs: the fenced blocks of a markdown text, by the convention") {
  const std::string md =
      "# Title\n"
      "```sh\n"
      "troupe --version\n"
      "# prints: troupe\n"
      "```\n"
      "\n"
      "```sh\n"
      "# illustration: needs a second host\n"
      "troupe agent --join control:7070\n"
      "```\n"
      "```bash\n"
      "echo no\n"
      "```\n"
      "```\n"
      "troupe run job.yaml\n"
      "```\n"
      "```\n"
      "$ curl -s localhost\n"
      "```\n"
      "```yaml\n"
      "jobs: []\n"
      "```\n"
      "````text\n"
      "```sh\n"
      "not a fence of its own\n"
      "```\n"
      "````\n"
      "- a list item:\n"
      "\n"
      "  ```sh\n"
      "  troupe run x.yaml\n"
      "  ```\n"
      "- another:\n"
      "\n"
      "  ```sh\n"
      "  # illustration: a server that runs until stopped\n"
      "  troupe serve\n"
      "  ```\n"
      "```sh\n"
      "# illustration:\n"
      "```\n"
      "```sh\n"
      "echo unclosed\n";
  const auto got = extract_blocks(md);

  REQUIRE(got.blocks.size() == 3);
  CHECK(got.runnable() == 1);
  const auto& run = got.blocks[0];
  CHECK(run.line == 2);
  CHECK(run.illustration.empty());
  CHECK(run.script.find("\n\ntroupe --version\n# prints: troupe\n") != std::string::npos);
  CHECK(std::count(run.script.begin(), run.script.end(), '\n') == 4);
  REQUIRE(run.prints.size() == 1);
  CHECK(run.prints[0].line == 4);
  CHECK(run.prints[0].text == "troupe");

  CHECK(got.blocks[1].line == 7);
  CHECK(got.blocks[1].illustration == "needs a second host");
  CHECK(got.blocks[2].line == 35);
  CHECK(got.blocks[2].illustration == "a server that runs until stopped");

  std::vector<int> error_lines;
  for (const auto& e : got.errors) error_lines.push_back(e.line);
  // ```bash, the unlabelled `troupe ` and `$ ` blocks, the indented runnable-looking block, the
  // illustration without a reason, the fence that never closes.
  CHECK(error_lines == std::vector<int>{11, 14, 17, 30, 39, 42});
  CHECK(got.errors[0].what.find("```bash") != std::string::npos);
}

TEST_CASE("docs: the shell blocks of README.md and docs/*.md run") {
  if (std::getenv("TROUPE_DOCS_NESTED")) {
    MESSAGE("inside a block of this test: not running the blocks again");
    return;
  }
  const char* root_env = std::getenv("TROUPE_DOCS_ROOT");
  const fs::path root =
      fs::absolute(root_env && *root_env ? fs::path(root_env) : fs::current_path());
  REQUIRE_MESSAGE(fs::exists(root / "README.md"),
                  "no README.md in " << root
                                     << ": run from the repository root (as ctest does) or set "
                                        "TROUPE_DOCS_ROOT");
  // Orphans of the blocks (background servers whose shell exited) become this process's
  // children, so that none escapes the final kill by having been started in the background.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);

  std::vector<fs::path> files = {root / "README.md"};
  std::vector<fs::path> docs;
  std::error_code ec;
  for (fs::directory_iterator it(root / "docs", ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".md") docs.push_back(it->path());
  std::sort(docs.begin(), docs.end());
  files.insert(files.end(), docs.begin(), docs.end());

  const auto scratch = scratch_dir("troupe-docs");
  for (const auto& md : files) {
    const auto sum = run_file(root, md, scratch);
    if (md == files.front())
      CHECK_MESSAGE(sum.run + sum.not_run > 0,
                    "README.md has no runnable ```sh block: its quick start must run here");
  }
}
