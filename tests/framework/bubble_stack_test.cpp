// The stacks of bubble threads: distinct while alive, few kernel mappings, pooled across runs and
// returned after a smaller run, and guarded below (an overflow faults on the guard page).

#include <bubble/bubble.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using bubble::Runtime;

constexpr std::size_t kStackSize = 64 * 1024;

std::int64_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::int64_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

// The process's virtual memory size (VmSize of /proc/self/status), in bytes.
std::int64_t virtual_size() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoll(line.substr(7)) * 1024;
  }
  return -1;
}

// Whether the kernel has guard markers (Linux 6.13's madvise(MADV_GUARD_INSTALL), 102).
bool kernel_has_guard_markers() {
  const long page = ::sysconf(_SC_PAGESIZE);
  void* p = ::mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool ok = ::syscall(SYS_madvise, p, static_cast<std::size_t>(page), 102) == 0;
  ::munmap(p, static_cast<std::size_t>(page));
  return ok;
}

// Runs `n` threads that are all alive (blocked) at once; `alive` runs then, on the root.
template <typename Alive>
void threads_alive_at_once(int n, Alive alive, std::vector<std::uintptr_t>* addresses = nullptr) {
  bubble::Options o;
  o.stack_size = kStackSize;
  bubble::run(o, [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    int started = 0;
    for (int i = 0; i < n; ++i) {
      threads.push_back(rt.spawn("t", [&] {
        volatile char local = 0;
        if (addresses != nullptr) addresses->push_back(reinterpret_cast<std::uintptr_t>(&local));
        ++started;
        rt.sleep_for(std::chrono::seconds(1));
        (void)local;
      }));
    }
    rt.yield();
    while (started < n) rt.yield();
    alive();
    for (auto& t : threads) t->join();
  });
}

// Threads alive at once never share a stack, in the run that maps the stacks and in a later run
// that reuses them from the pool.
TEST(BubbleStacks, ThreadsAliveAtOnceHaveDistinctStacks) {
  for (int run = 0; run < 3; ++run) {
    std::vector<std::uintptr_t> addresses;
    threads_alive_at_once(
        300 + 50 * run, [] {}, &addresses);
    ASSERT_EQ(addresses.size(), static_cast<std::size_t>(300 + 50 * run));
    std::sort(addresses.begin(), addresses.end());
    for (std::size_t i = 1; i < addresses.size(); ++i) {
      ASSERT_GE(addresses[i] - addresses[i - 1], kStackSize) << "run " << run << ", thread " << i;
    }
  }
}

// With guard markers, guard pages do not split mappings: 10,000 threads alive at once add a few
// hundred mappings (one per chunk of stacks at most), not two per thread.
TEST(BubbleStacks, TenThousandThreadsAddFarFewerMappingsThanThreads) {
  if (!kernel_has_guard_markers()) GTEST_SKIP() << "the kernel has no MADV_GUARD_INSTALL";
  const std::int64_t before = mapping_count();
  std::int64_t during = 0;
  threads_alive_at_once(10'000, [&] { during = mapping_count(); });
  EXPECT_LT(during - before, 10'000 / 64 + 50) << "before " << before << ", during " << during;
}

// The pool keeps the stacks a run needed (a repeated run maps nothing) and returns the memory of
// a big run after a smaller one: 3,000 stacks of 64 KiB are ~200 MB of address space.
TEST(BubbleStacks, ABigRunsStacksAreKeptForTheNextRunThenReturnedAfterASmallOne) {
  threads_alive_at_once(2, [] {});
  const std::int64_t before = virtual_size();
  std::int64_t during = 0;
  threads_alive_at_once(3'000, [&] { during = virtual_size(); });
  const std::int64_t after_big = virtual_size();
  const std::int64_t stacks = 3'000 * static_cast<std::int64_t>(kStackSize);
  EXPECT_GE(during - before, stacks);
  EXPECT_GE(after_big - before, stacks) << "the stacks of the big run were not kept";
  std::int64_t mappings_again = 0;
  std::int64_t size_again = 0;
  const std::int64_t mappings_before_again = mapping_count();
  const std::int64_t size_before_again = virtual_size();
  threads_alive_at_once(3'000, [&] {
    mappings_again = mapping_count();
    size_again = virtual_size();
  });
  // A repeated run reuses the kept stacks: its address space grows by far less than its stacks
  // (about 200 MB), and it adds at most a few mappings (AddressSanitizer's allocator maps a few
  // regions of its own as a run's allocations grow: 2 to 4 in a full ASan run).
  EXPECT_LT(size_again - size_before_again, stacks / 10) << "a repeated run mapped new stacks";
  EXPECT_LE(mappings_again, mappings_before_again + 16) << "a repeated run mapped new stacks";
  threads_alive_at_once(2, [] {});
  const std::int64_t after_small = virtual_size();
  EXPECT_LT(after_small - before, stacks / 10)
      << "before " << before << ", after the big run " << after_big << ", after a small run "
      << after_small;
}

// An overflow faults on the guard page just below the thread's stack (not further down, in
// another thread's stack or another mapping).
std::uintptr_t g_stack_low = 0;  // The lowest address the overflowing thread may use.

void on_fault(int, siginfo_t* info, void*) {
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  if (at < g_stack_low && at >= g_stack_low - page) {
    static const char kText[] = "fault on the guard page\n";
    (void)!::write(2, kText, sizeof kText - 1);
    ::_exit(3);
  }
  static const char kText[] = "fault elsewhere\n";
  (void)!::write(2, kText, sizeof kText - 1);
  ::_exit(4);
}

// Recurses until `limit` (far more than the stack holds), 512 bytes a frame.
int recurse(int depth, int limit) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth == limit) return frame[0];
  return recurse(depth + 1, limit) + frame[0];
}

void overflow_a_thread() {
  static char alt[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  ::sigaction(SIGSEGV, &sa, nullptr);
  bubble::Options o;
  o.stack_size = kStackSize;
  o.watchdog = std::chrono::milliseconds{0};
  bubble::run(o, [](Runtime& rt) {
    auto t = rt.spawn("deep", [] {
      volatile char top = 0;
      // The usable stack is the kStackSize bytes below the fiber's record, which Boost keeps at
      // its top: the record is far smaller than a page.
      const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      const auto here = reinterpret_cast<std::uintptr_t>(&top);
      g_stack_low = (here - kStackSize + page - 1) / page * page;
      std::exit(recurse(0, 1 << 30));
    });
    t->join();
  });
}

TEST(BubbleStacksDeathTest, AnOverflowFaultsOnTheGuardPage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(overflow_a_thread(), ::testing::ExitedWithCode(3), "fault on the guard page");
}

// Recurses `depth` frames of 1 KiB, each written whole, then reaches a scheduling point.
int fill_then_yield(Runtime& rt, int depth) {
  volatile char frame[1024];
  for (char& c : const_cast<char(&)[1024]>(frame)) c = static_cast<char>(depth);
  if (depth == 0) {
    rt.yield();
    return frame[0];
  }
  return fill_then_yield(rt, depth - 1) + frame[1];
}

// `exit_after`: the thread ends the process (exit code 5) once back from its scheduling point.
void run_with_canary_stacks(int depth, bool exit_after = false) {
  bubble::Options o;
  o.stack_size = kStackSize;
  o.stack_guard = bubble::StackGuard::canary;
  bubble::run(o, [depth, exit_after](Runtime& rt) {
    auto t = rt.spawn("deep", [&rt, depth, exit_after] {
      (void)fill_then_yield(rt, depth);
      if (exit_after) std::_Exit(5);
    });
    // Runnable when "deep" yields, so that the yield switches to it.
    auto other = rt.spawn("other", [&rt] { rt.yield(); });
    t->join();
    other->join();
  });
}

// With canary stacks, a thread that overran its stack is reported when it next switches out
// (before it can run on), and when it ends.
TEST(BubbleStacksDeathTest, ACanaryStackOverflowIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int too_deep = static_cast<int>(kStackSize / 1024) + 8;
  const char* report =
      "bubble: stack overflow in thread #2 \"deep\" of bubble: the canary at the low end of its "
      "65536-byte stack was overwritten .* Its last scheduling point was yield at .*"
      "bubble_stack_test.cpp:[0-9]+";
  EXPECT_DEATH(run_with_canary_stacks(too_deep, true), report);
  EXPECT_DEATH(run_with_canary_stacks(too_deep), report);
}

// Canary stacks that do not overflow run as guarded ones do, and take no guard pages: 10,000 of
// them alive at once add about one mapping per chunk of 64 on every kernel.
TEST(BubbleStacks, CanaryStacksRunWithoutGuardPages) {
  run_with_canary_stacks(8);
  bubble::Options o;
  o.stack_size = kStackSize;
  o.stack_guard = bubble::StackGuard::canary;
  const std::int64_t before = mapping_count();
  std::int64_t during = 0;
  int ran = 0;
  bubble::run(o, [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    for (int i = 0; i < 10'000; ++i) {
      threads.push_back(rt.spawn("t", [&rt, &ran] {
        rt.sleep_for(std::chrono::seconds(1));
        ++ran;
      }));
    }
    rt.yield();
    during = mapping_count();
    for (auto& t : threads) t->join();
  });
  EXPECT_EQ(ran, 10'000);
  EXPECT_LT(during - before, 10'000 / 64 + 50) << "before " << before << ", during " << during;
}

}  // namespace
