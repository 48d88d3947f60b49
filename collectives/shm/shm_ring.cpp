#include "collectives/shm/shm_ring.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

#include "collectives/op_control.hpp"
#include "core/error.hpp"

namespace troupe::collectives::shm {
namespace {

std::size_t segment_bytes(std::uint32_t slots, std::uint32_t eager_slots,
                          std::uint32_t eager_bytes) {
  return control_bytes + std::size_t{slots} * 64 + std::size_t{eager_slots} * eager_bytes;
}

void* map(int fd, std::size_t bytes, const std::string& name) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    throw runtime_failure("shm: mmap of " + name + " failed: " + std::strerror(errno));
  return base;
}

}  // namespace

segment segment::create(const std::string& name, std::uint32_t slots, std::uint32_t eager_slots,
                        std::uint32_t eager_bytes) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw runtime_failure("shm: cannot create " + name + ": " + std::strerror(errno));
  const std::size_t bytes = segment_bytes(slots, eager_slots, eager_bytes);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    ::shm_unlink(name.c_str());
    throw runtime_failure("shm: cannot size " + name +
                          " (is /dev/shm full?): " + std::strerror(errno));
  }
  segment s;
  s.base_ = map(fd, bytes, name);
  ::close(fd);
  s.bytes_ = bytes;
  s.name_ = name;
  s.slots_ = slots;
  s.eager_slots_ = eager_slots;
  s.eager_bytes_ = eager_bytes;
  auto* control = new (s.base_) ring_control{};
  control->slots = slots;
  control->eager_slots = eager_slots;
  control->eager_bytes = eager_bytes;
  control->receiver_pid.store(static_cast<std::int32_t>(::getpid()));
  return s;
}

segment segment::open(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw runtime_failure("shm: cannot open " + name + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  segment s;
  s.base_ = map(fd, static_cast<std::size_t>(st.st_size), name);
  ::close(fd);
  s.bytes_ = static_cast<std::size_t>(st.st_size);
  s.name_ = name;
  // The creator (the peer that reads this segment) chose its geometry; check that it fits.
  const ring_control& c = s.control();
  if (s.bytes_ < control_bytes || c.slots == 0 || c.eager_bytes % 64 != 0 ||
      s.bytes_ != segment_bytes(c.slots, c.eager_slots, c.eager_bytes))
    throw runtime_failure("shm: segment " + name + " has an unexpected size");
  s.slots_ = c.slots;
  s.eager_slots_ = c.eager_slots;
  s.eager_bytes_ = c.eager_bytes;
  s.control().sender_pid.store(static_cast<std::int32_t>(::getpid()));
  return s;
}

segment::segment(segment&& o) noexcept {
  *this = std::move(o);
}
segment& segment::operator=(segment&& o) noexcept {
  std::swap(base_, o.base_);
  std::swap(bytes_, o.bytes_);
  std::swap(name_, o.name_);
  std::swap(slots_, o.slots_);
  std::swap(eager_slots_, o.eager_slots_);
  std::swap(eager_bytes_, o.eager_bytes_);
  return *this;
}
segment::~segment() {
  if (base_) ::munmap(base_, bytes_);
}

void segment::unlink_name() {
  ::shm_unlink(name_.c_str());
}

descriptor& segment::slot(std::uint32_t sequence) const {
  auto* at = static_cast<std::byte*>(base_) + control_bytes + std::size_t{sequence % slots_} * 64;
  return *reinterpret_cast<descriptor*>(at);
}

std::byte* segment::eager(std::uint32_t sequence) const {
  return static_cast<std::byte*>(base_) + control_bytes + std::size_t{slots_} * 64 +
         std::size_t{sequence % eager_slots_} * eager_bytes_;
}

void futex_wait(std::atomic<std::uint32_t>& word, std::atomic<std::uint32_t>& sleepers,
                std::uint32_t seen, long timeout_ns) {
  // Callers loop and look at the word again, as after any early return of the futex.
  if (poll_briefly([&] { return word.load(std::memory_order_acquire) != seen; })) return;
  timespec timeout{timeout_ns / 1000000000L, timeout_ns % 1000000000L};
  // Counted before the kernel compares the word: a waker that changed the word after that
  // compare sees the count (both sides order through seq_cst), one before it makes the compare
  // fail. Not FUTEX_PRIVATE: the word lives in memory shared between processes.
  sleepers.fetch_add(1);
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, seen, &timeout, nullptr,
            0);
  sleepers.fetch_sub(1);
}

void futex_wake(std::atomic<std::uint32_t>& word, const std::atomic<std::uint32_t>& sleepers) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleepers.load() != 0) futex_wake_all(word);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 1 << 30, nullptr,
            nullptr, 0);
}

int read_remote(std::int32_t pid, void* local, std::uint64_t remote, std::size_t bytes) {
  while (bytes > 0) {
    iovec to{local, bytes};
    iovec from{reinterpret_cast<void*>(remote), bytes};
    const ssize_t got = ::process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (got <= 0) return got == 0 ? EIO : errno;
    local = static_cast<std::byte*>(local) + got;
    remote += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
  return 0;
}

bool process_alive(std::int32_t pid) {
  if (pid <= 0) return true;
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

int remove_stale_segments(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  int removed = 0;
  const std::string lead = "troupe-";
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, lead.size(), lead) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + lead.size(), &end, 10);
    if (pid <= 0 || !end || *end != '-') continue;
    struct stat st {};
    if (::stat((dir + "/" + name).c_str(), &st) != 0 || st.st_uid != ::getuid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (::shm_unlink(("/" + name).c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace troupe::collectives::shm
