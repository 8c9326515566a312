// A crash in a bubble: SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT on an OS thread that runs a
// bubble ends the process, as it would without bubble (nothing can be torn down after memory was
// corrupted or code jumped astray), but with a report first, on standard error:
//
//   bubble: crash: thread #3 "worker" of bubble received SIGSEGV (invalid memory access at
//   0x10) at step 812, virtual time +5ms
//     thread #1 "root": blocked on Thread::join (object #2) at pool_test.cpp:40
//     thread #3 "worker": running, last at Mutex::unlock pool.cpp:211
//   replay: BUBBLE_STRATEGY=random:7
//
// If the run had already failed (a crash while it is torn down), the failure's report, written
// when the failure was decided, follows instead of the threads. The first line is written without
// allocating; the threads and the replay line are composed with the allocator, which a crash may
// have left locked: an alarm ends the process if that part does not finish in 10 s. Then the
// handler that was there before (the default, or a sanitizer's, which prints its own report) gets
// the signal.
//
// The handlers are installed once per process, when the first bubble runs, and run on an
// alternate signal stack installed on each OS thread that runs a bubble (a stack overflow faults
// on the guard page of a fiber's stack, where no handler could run).

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>

#include "engine/bubble.hpp"

#ifdef BUBBLE_ENGINE_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace bubble::engine {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction g_previous[std::size(kCrashSignals)];
std::atomic<bool> g_reported{false};  // One report per process: the first crash's.

constexpr std::size_t kSignalStackSize = std::size_t{256} * 1024;  // Room for composing the report.
constexpr unsigned kComposeSeconds = 10;

void write_all(const char* text, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t written = ::write(STDERR_FILENO, text, n);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text += written;
    n -= static_cast<std::size_t>(written);
  }
}

void write_text(const char* text) noexcept {
  write_all(text, std::strlen(text));
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "a signal";
  }
}

// What the signal means, for the first line: "invalid memory access at 0x10", "abort()".
void describe_signal(int sig, const siginfo_t* info, char* out, std::size_t size) noexcept {
  switch (sig) {
    case SIGSEGV:
      std::snprintf(out, size, "invalid memory access at %p", info->si_addr);
      return;
    case SIGBUS:
      std::snprintf(out, size, "bus error at %p", info->si_addr);
      return;
    case SIGILL:
      std::snprintf(out, size, "illegal instruction at %p", info->si_addr);
      return;
    case SIGFPE:
      std::snprintf(out, size, "arithmetic error (%s) at %p",
                    info->si_code == FPE_INTDIV ? "integer division by zero" : "floating point",
                    info->si_addr);
      return;
    case SIGABRT:
      std::snprintf(out, size, "abort(): a failed assert, or a library that gave up");
      return;
    default:
      std::snprintf(out, size, "signal %d", sig);
  }
}

// A duration as "+1.5s"-like text without allocating: the largest unit that divides it.
void duration_text(Duration d, char* out, std::size_t size) noexcept {
  const auto ns = static_cast<long long>(std::chrono::nanoseconds(d).count());
  if (ns % 1'000'000'000 == 0) {
    std::snprintf(out, size, "%llds", ns / 1'000'000'000);
  } else if (ns % 1'000'000 == 0) {
    std::snprintf(out, size, "%lldms", ns / 1'000'000);
  } else if (ns % 1'000 == 0) {
    std::snprintf(out, size, "%lldus", ns / 1'000);
  } else {
    std::snprintf(out, size, "%lldns", ns);
  }
}

void restore_previous(int sig) noexcept {
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) {
    if (kCrashSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  }
}

void crash_handler(int sig, siginfo_t* info, void* /*context*/) {
  const int saved_errno = errno;
  Bubble* const bubble = tl_bubble;
  if (bubble != nullptr && !g_reported.exchange(true)) bubble->report_crash(sig, info);
  restore_previous(sig);
  // A signal that was sent (abort's raise, kill) is sent again, to be delivered to the previous
  // handler once this one returns; a fault happens again when the instruction is retried.
  if (info == nullptr || info->si_code <= 0 || sig == SIGABRT) ::raise(sig);
  errno = saved_errno;
}

#ifdef BUBBLE_ENGINE_ASAN
// AddressSanitizer ends the process itself after its report (heap overflow, use after free): the
// bubble's report follows it.
void asan_death_callback() {
  Bubble* const bubble = tl_bubble;
  if (bubble != nullptr && !g_reported.exchange(true)) bubble->report_crash(0, nullptr);
}
#endif

// The alternate signal stack this OS thread installed, removed when the thread ends.
struct SignalStack {
  void* memory = nullptr;
  ~SignalStack() {
    if (memory == nullptr) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
    ::munmap(memory, kSignalStackSize);
  }
};
thread_local SignalStack tl_signal_stack;

}  // namespace

void install_crash_report() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = &crash_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) {
      ::sigaction(kCrashSignals[i], &action, &g_previous[i]);
    }
#ifdef BUBBLE_ENGINE_ASAN
    __sanitizer_set_death_callback(&asan_death_callback);
#endif
  });
  if (tl_signal_stack.memory != nullptr) return;
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;
  void* memory =
      ::mmap(nullptr, kSignalStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // Crashes are still reported, except stack overflows.
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = kSignalStackSize;
  if (::sigaltstack(&stack, nullptr) != 0) {
    ::munmap(memory, kSignalStackSize);
    return;
  }
  tl_signal_stack.memory = memory;
}

void Bubble::report_crash(int sig, const siginfo_t* info) noexcept {
  const BThread* const t = current_;
  char who[512];
  if (t != nullptr) {
    std::snprintf(who, sizeof who, "thread #%" PRIu64 " \"%s\"", t->id, t->name.c_str());
  } else {
    std::snprintf(who, sizeof who, "the scheduler (a timer callback)");
  }
  char what[160];
  describe_signal(sig, info, what, sizeof what);
  char elapsed[48];
  duration_text(now_ - start_, elapsed, sizeof elapsed);
  char line[1024];
  if (sig == 0) {
    std::snprintf(line, sizeof line,
                  "bubble: crash: AddressSanitizer ended the process above while %s of %s ran, at "
                  "step %" PRIu64 ", virtual time +%s\n",
                  who, name_.c_str(), steps_.load(std::memory_order_relaxed), elapsed);
  } else {
    std::snprintf(
        line, sizeof line,
        "bubble: crash: %s of %s received %s (%s) at step %" PRIu64 ", virtual time +%s\n", who,
        name_.c_str(), signal_name(sig), what, steps_.load(std::memory_order_relaxed), elapsed);
  }
  write_text(line);
  if (t != nullptr && sig == SIGSEGV && info != nullptr) {
    // A fault just below the usable stack: on its guard page, or a frame's reach past it.
    const auto* address = static_cast<const char*>(info->si_addr);
    const auto* bottom = static_cast<const char*>(t->stack_bottom);
    if (bottom != nullptr && address < bottom && address >= bottom - std::ptrdiff_t{64} * 1024) {
      std::snprintf(line, sizeof line,
                    "  it overflowed its stack of %zu bytes: raise Options::stack_size\n",
                    t->stack_size);
      write_text(line);
    }
  }
  if (failed_) {
    write_text("  the run had failed before the crash; its report:\n");
    write_all(failure_message_.data(), failure_message_.size());
    write_text("\n");
  } else {
    // The last point of each thread and the replay line allocate: an alarm ends the process if
    // the allocator was left locked by the crash.
    ::alarm(kComposeSeconds);
    try {
      const std::string rest = thread_report() + replay_line() + "\n";
      write_all(rest.data(), rest.size());
    } catch (...) {
      write_text("  (the threads and the replay line could not be composed)\n");
    }
    ::alarm(0);
  }
  if (sig != 0)
    write_text("bubble: the process ends with the signal: a crash cannot be torn down\n");
}

}  // namespace bubble::engine
