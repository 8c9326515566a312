// Runtime::current_thread_token() on the system runtime: one token per OS thread, the same in
// every call from that thread, different for two threads alive at once.

#include <bubble/runtime.hpp>

#include <gtest/gtest.h>

#include <latch>
#include <thread>

#include "manual_runtime.hpp"

namespace {

TEST(SystemThreadToken, IsStableWithinAThreadAndDiffersBetweenLiveThreads) {
  bubble::Runtime& rt = bubble::system_runtime();
  const void* mine = rt.current_thread_token();
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(rt.current_thread_token(), mine);

  const void* a_first = nullptr;
  const void* a_second = nullptr;
  const void* b_token = nullptr;
  std::latch both_took(2);  // Keeps both threads alive until each has its token.
  std::thread a([&] {
    a_first = rt.current_thread_token();
    both_took.arrive_and_wait();
    a_second = rt.current_thread_token();
  });
  std::thread b([&] {
    b_token = rt.current_thread_token();
    both_took.arrive_and_wait();
  });
  a.join();
  b.join();
  EXPECT_NE(a_first, nullptr);
  EXPECT_EQ(a_first, a_second);
  EXPECT_NE(a_first, b_token);
  EXPECT_NE(a_first, mine);
  EXPECT_NE(b_token, mine);
  EXPECT_EQ(rt.current_thread_token(), mine);
}

// Every runtime that is not controlled runs its threads as OS threads: they agree on the token.
TEST(SystemThreadToken, IsTheOsThreadsOnEveryUncontrolledRuntime) {
  bubble_test::ManualRuntime manual;
  EXPECT_EQ(manual.current_thread_token(), bubble::system_runtime().current_thread_token());
}

}  // namespace
