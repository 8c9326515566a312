// errno in a bubble: bubble threads share one OS thread, and errno is per OS thread, so the
// engine keeps a copy per bubble thread (saved when a thread switches out, restored when it
// switches back in). Each thread sees the errno it left, whatever the others did meanwhile, as on
// real threads.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

// A thread sets errno and blocks on a channel; the thread that runs meanwhile sets another; the
// first sees its own when it resumes, and so does the second.
TEST(BubbleErrno, AThreadSeesItsOwnErrnoAfterBlocking) {
  int seen_by_a = 0;
  int seen_by_b = 0;
  bubble::run([&](Runtime& rt) {
    bubble::Channel<int> to_b(0, rt);
    bubble::Channel<int> to_a(0, rt);
    auto a = rt.spawn("a", [&] {
      errno = EINTR;
      (void)to_b.send(1);    // Blocks until b receives.
      (void)to_a.receive();  // Blocks: b runs and sets errno = EAGAIN.
      seen_by_a = errno;
      (void)to_b.send(2);
    });
    auto b = rt.spawn("b", [&] {
      (void)to_b.receive();
      errno = EAGAIN;
      (void)to_a.send(3);
      (void)to_b.receive();  // Blocks while a runs with its own errno.
      seen_by_b = errno;
    });
    a->join();
    b->join();
  });
  EXPECT_EQ(seen_by_a, EINTR);
  EXPECT_EQ(seen_by_b, EAGAIN);
}

// The same across sleeps, where the scheduler (which fires the timers) runs in between, under
// several schedules: every thread sets its own value, sleeps, and finds it.
TEST(BubbleErrno, EveryThreadKeepsItsErrnoAcrossSleepsUnderAnySchedule) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<int> mismatches;
    bubble::Options options;
    options.strategy = bubble::Strategy::random(seed);
    bubble::run(options, [&](Runtime& rt) {
      std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
      for (int i = 1; i <= 4; ++i) {
        threads.push_back(rt.spawn("t", [&mismatches, i] {
          for (int k = 0; k < 3; ++k) {
            errno = 100 * i + k;
            bubble::sleep_for(std::chrono::milliseconds(i));
            if (errno != 100 * i + k) mismatches.push_back(errno);
          }
        }));
      }
      for (auto& t : threads) t->join();
    });
    EXPECT_TRUE(mismatches.empty()) << "seed " << seed << ": " << mismatches.size()
                                    << " wrong errno values, the first " << mismatches[0];
  }
}

// A new bubble thread starts with errno 0, as a new OS thread does, whatever its parent set.
TEST(BubbleErrno, ANewThreadStartsWithZero) {
  int seen = -1;
  bubble::run([&](Runtime& rt) {
    errno = ENOENT;
    auto t = rt.spawn("child", [&] { seen = errno; });
    t->join();
  });
  EXPECT_EQ(seen, 0);
}

// The OS thread that called bubble::run finds its errno as it left it, whatever the bubble's
// threads set.
TEST(BubbleErrno, TheCallerOfRunKeepsItsErrno) {
  errno = EDOM;
  bubble::run([](Runtime& rt) {
    errno = ERANGE;
    rt.sleep_for(1ms);
    errno = EPERM;
  });
  EXPECT_EQ(errno, EDOM);
}

}  // namespace
