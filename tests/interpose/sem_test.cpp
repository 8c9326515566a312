// POSIX semaphores (sem_*) in an intercepting bubble: waits are durable and timed in virtual time,
// the count stays in the sem_t, a deadlock is reported with the semaphore named.

#include <semaphore.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

#include "intercepted_run.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;

timespec after(clockid_t clock, std::chrono::nanoseconds d) {
  timespec now{};
  clock_gettime(clock, &now);
  const auto ns = std::chrono::seconds{now.tv_sec} + std::chrono::nanoseconds{now.tv_nsec} + d;
  const auto s = std::chrono::floor<std::chrono::seconds>(ns);
  return {static_cast<time_t>(s.count()), static_cast<long>((ns - s).count())};
}

TEST(InterposeSem, AWaiterReturnsAtThePostersVirtualInstant) {
  const auto result = run_std([] {
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, 0), 0);
    const auto t0 = steady_clock::now();
    std::thread poster([&] {
      std::this_thread::sleep_for(70ms);
      EXPECT_EQ(sem_post(&s), 0);
    });
    EXPECT_EQ(sem_wait(&s), 0);
    EXPECT_EQ(steady_clock::now() - t0, 70ms);
    poster.join();
    EXPECT_EQ(sem_destroy(&s), 0);
  });
  EXPECT_EQ(result.elapsed, 70ms);
}

TEST(InterposeSem, TimedWaitsTimeOutAtExactVirtualInstantsOnBothClocks) {
  run_std([] {
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, 0), 0);
    const auto t0 = steady_clock::now();
    timespec deadline = after(CLOCK_REALTIME, 25ms);
    EXPECT_EQ(sem_timedwait(&s, &deadline), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    EXPECT_EQ(steady_clock::now() - t0, 25ms);
    deadline = after(CLOCK_MONOTONIC, 30ms);
    EXPECT_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &deadline), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    EXPECT_EQ(steady_clock::now() - t0, 55ms);
    // Posted before the deadline: returns at the post.
    std::thread poster([&] {
      std::this_thread::sleep_for(5ms);
      sem_post(&s);
    });
    deadline = after(CLOCK_MONOTONIC, 1h);
    EXPECT_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &deadline), 0);
    EXPECT_EQ(steady_clock::now() - t0, 60ms);
    poster.join();
    timespec bad{0, -1};
    EXPECT_EQ(sem_timedwait(&s, &bad), -1);
    EXPECT_EQ(errno, EINVAL);
    sem_destroy(&s);
  });
}

TEST(InterposeSem, TrywaitGetvalueAndTheCountKeptInTheSemT) {
  sem_t s;
  ASSERT_EQ(sem_init(&s, 0, 2), 0);  // Outside the run: the real sem_init.
  run_std([&] {
    int value = -1;
    EXPECT_EQ(sem_getvalue(&s, &value), 0);
    EXPECT_EQ(value, 2);
    EXPECT_EQ(sem_trywait(&s), 0);
    EXPECT_EQ(sem_wait(&s), 0);
    EXPECT_EQ(sem_trywait(&s), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(sem_post(&s), 0);
    EXPECT_EQ(sem_getvalue(&s, &value), 0);
    EXPECT_EQ(value, 1);
  });
  // After the run the real functions see the count the run left.
  int value = -1;
  EXPECT_EQ(sem_getvalue(&s, &value), 0);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(sem_trywait(&s), 0);
  EXPECT_EQ(sem_trywait(&s), -1);
  sem_destroy(&s);
}

TEST(InterposeSem, AWaitNobodyPostsIsReportedAsADeadlockNamingTheSemaphore) {
  try {
    run_std([] {
      sem_t s;
      sem_init(&s, 0, 0);
      // Not a tail call: the return address is then in this lambda.
      std::thread waiter([&] { EXPECT_EQ(sem_wait(&s), 0); });
      std::this_thread::sleep_for(3ms);
      waiter.join();
    });
    FAIL() << "run() returned";
  } catch (const bubble::DeadlockError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("at 2000-01-01T00:00:00.003Z"), std::string::npos) << message;
    EXPECT_NE(message.find("\"std::thread\": blocked on CondVar::wait \"sem_t\" (object #"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(std::string(") at sem_wait called from ") +
                           program_invocation_short_name + "+0x"),
              std::string::npos)
        << message;
  }
}

}  // namespace
