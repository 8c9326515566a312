// The futex calls under the system runtime's parker and detail::SpinLock leave errno as they found
// it: the kernel's answers (EAGAIN when the word no longer holds the expected value, ETIMEDOUT,
// EINTR) are how a futex wait returns, not errors, and a Mutex::lock or a park must not change
// the errno of the code that called it (as std::mutex does not). Each call below returns at once.
// (A wake on a valid word never fails, so only the waits can be seen to change errno.)

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>

#include "kernel/futex.hpp"

namespace {

TEST(Futex, AWaitOnAWordThatChangedLeavesErrnoAlone) {
  std::atomic<std::uint32_t> word{1};
  errno = EDOM;
  bubble::detail::futex_wait(word, 0, nullptr);  // The kernel answers EAGAIN at once.
  EXPECT_EQ(errno, EDOM);
}

TEST(Futex, AWaitThatTimesOutLeavesErrnoAlone) {
  std::atomic<std::uint32_t> word{1};
  const timespec zero{0, 0};
  errno = EDOM;
  bubble::detail::futex_wait(word, 1, &zero);  // The kernel answers ETIMEDOUT at once.
  EXPECT_EQ(errno, EDOM);
}

}  // namespace
