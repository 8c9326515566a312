#include <gtest/gtest.h>
#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/thread.hpp>
using namespace std::chrono_literals;

TEST(Example, ConsumerSeesEveryValueAtExactVirtualTimes) {
  bubble::run({}, [](bubble::Runtime& rt) {
    bubble::Channel<int> values(0, rt);  // unbuffered: every send waits for the receiver
    const bubble::TimePoint start = rt.now();
    bubble::Thread producer(rt, "producer", [&] {
      for (int i = 0; i < 3; ++i) {
        rt.sleep_for(1s);
        ASSERT_FALSE(values.send(i));
      }
      values.close();
    });
    int expected = 0;
    while (auto v = values.receive()) EXPECT_EQ(*v, expected++);
    EXPECT_EQ(rt.now() - start, 3s);  // exactly three virtual seconds, instantly
  });
}
