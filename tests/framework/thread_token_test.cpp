// Runtime::current_thread_token() in a bubble, where every bubble thread shares one OS thread:
// each bubble thread has a token of its own, stable across its blocking calls; a timer callback
// has the OS thread's token, which no bubble thread has. The Mutex identifies its owner by it.

#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

TEST(ThreadToken, EachBubbleThreadHasItsOwnTokenForItsWholeLife) {
  const void* os_thread = bubble::system_runtime().current_thread_token();
  std::vector<const void*> first(3), later(3);
  const void* root = nullptr;
  const void* root_later = nullptr;
  bubble::run({.strategy = bubble::Strategy::random(7)}, [&](Runtime& rt) {
    root = rt.current_thread_token();
    std::vector<bubble::Thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back("t" + std::to_string(i), [&rt, &first, &later, i] {
        first[i] = rt.current_thread_token();
        // Blocks, so the others run (and take their tokens) meanwhile: all are alive.
        rt.sleep_for(1ms * (i + 1));
        rt.yield();
        later[i] = rt.current_thread_token();
      });
    }
    for (auto& t : threads) t.join();
    root_later = rt.current_thread_token();
  });
  std::set<const void*> distinct(first.begin(), first.end());
  distinct.insert(root);
  EXPECT_EQ(distinct.size(), 4u) << "two live bubble threads share a token";
  EXPECT_EQ(later, first) << "a thread's token changed during its life";
  EXPECT_EQ(root_later, root);
  for (const void* t : distinct) {
    EXPECT_NE(t, nullptr);
    EXPECT_NE(t, os_thread) << "a bubble thread has the OS thread's token";
  }
}

TEST(ThreadToken, ATimerCallbackHasTheOsThreadsTokenNotABubbleThreads) {
  const void* os_thread = bubble::system_runtime().current_thread_token();
  const void* in_callback = nullptr;
  const void* root = nullptr;
  bubble::run([&](Runtime& rt) {
    root = rt.current_thread_token();
    rt.schedule_at(rt.now() + 1ms, [&] { in_callback = rt.current_thread_token(); });
    rt.sleep_for(2ms);
  });
  EXPECT_EQ(in_callback, os_thread);
  EXPECT_NE(in_callback, root);
}

// The Mutex's owner check rests on the tokens: in a bubble, another bubble thread (same OS
// thread) cannot unlock a Mutex it does not hold, and the holder can.
TEST(ThreadToken, AMutexKnowsWhichBubbleThreadHoldsIt) {
  std::string message;
  bool stolen = true;
  bubble::run([&](Runtime& rt) {
    bubble::Mutex mu(rt);
    mu.lock();
    bubble::Thread("intruder", [&] {
      try {
        mu.unlock();
      } catch (const std::logic_error& e) {
        message = e.what();
      }
      stolen = mu.try_lock();
    }).join();
    mu.unlock();
  });
  EXPECT_NE(message.find("does not hold it"), std::string::npos) << message;
  EXPECT_FALSE(stolen);
}

}  // namespace
