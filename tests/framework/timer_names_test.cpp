// Named timers: Timer, Ticker and after() take an optional name, which their channel carries
// into deadlock reports (Channel::receive "deadline" (object #1)) and traces
// (Timer::stop "deadline" #1); after_func's name is the name of the thread it starts.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/runtime.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "../support/failure_text.hpp"

namespace {

using bubble::test_support::at;
using bubble::test_support::deadlock_of;

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Runtime;
using bubble::SourceLocation;

// Whether `text` has a line equal to `line`.
bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

// A stopped timer never delivers: a receive on it deadlocks, and the report names the timer.
TEST(TimerNames, StoppedNamedTimerBlocksTheReceiverUnderItsName) {
  SourceLocation receive;
  const std::string m = deadlock_of([&](Runtime& rt) {
    bubble::Timer deadline("deadline", 1s, rt);  // object #1 (its channel)
    (void)deadline.stop();
    receive = SourceLocation::current(),
    (void)deadline.channel().receive(Context::background(), receive);
  });
  EXPECT_TRUE(has_line(m,
                       "  thread #1 \"root\": blocked on Channel::receive \"deadline\" "
                       "(object #1) at " +
                           at(receive)))
      << m;
}

TEST(TimerNames, StoppedNamedTickerBlocksTheReceiverUnderItsName) {
  SourceLocation receive;
  const std::string m = deadlock_of([&](Runtime& rt) {
    bubble::Ticker heartbeat("heartbeat", 1s, rt);  // object #1
    heartbeat.stop();
    receive = SourceLocation::current(),
    (void)heartbeat.channel().receive(Context::background(), receive);
  });
  EXPECT_TRUE(has_line(m,
                       "  thread #1 \"root\": blocked on Channel::receive \"heartbeat\" "
                       "(object #1) at " +
                           at(receive)))
      << m;
}

// An unnamed timer keeps the bare id, as any unnamed object.
TEST(TimerNames, UnnamedTimerKeepsTheBareId) {
  const std::string m = deadlock_of([](Runtime& rt) {
    bubble::Timer timer(1s, rt);
    (void)timer.stop();
    (void)timer.channel().receive();
  });
  EXPECT_NE(m.find("\"root\": blocked on Channel::receive (object #1) at "), std::string::npos)
      << m;
}

// The lines of `trace` that mention `needle`, each without its location (a last field with a
// '/' and a ':' in it, "../../framework/src/primitives/timer.cpp:109").
std::string lines_with(const std::string& trace, const std::string& needle) {
  std::string out;
  std::size_t begin = 0;
  while (begin < trace.size()) {
    std::size_t end = trace.find('\n', begin);
    if (end == std::string::npos) end = trace.size();
    std::string line = trace.substr(begin, end - begin);
    const std::size_t last = line.rfind(' ');
    if (last != std::string::npos && line.find('/', last) != std::string::npos &&
        line.find(':', last) != std::string::npos) {
      line.resize(last);
    }
    if (line.find(needle) != std::string::npos) out += line + "\n";
    begin = end + 1;
  }
  return out;
}

// In the trace, a named timer's and ticker's operations and the waits on their channels carry
// their names.
TEST(TimerNames, TraceShowsTimerTickerAndAfterNames) {
  const SourceLocation none{};  // No location field in these lines.
  const bubble::RunResult r = bubble::run({.trace = true}, [&](Runtime& rt) {
    bubble::Timer deadline("deadline", 1s, rt);     // object #1
    bubble::Ticker heartbeat("heartbeat", 1s, rt);  // object #2
    (void)deadline.channel().receive(Context::background(), none);
    (void)heartbeat.channel().receive(Context::background(), none);
    heartbeat.reset(2s, none);
    heartbeat.stop(none);
    (void)deadline.reset(1s, none);
    (void)deadline.stop(none);
    (void)bubble::after("poll timeout", 1s, rt).wait(none);  // object #3
  });
  EXPECT_EQ(lines_with(r.trace_text(), "\""),
            "0s #1 root op Channel::receive \"deadline\" #1\n"
            "0s #1 root block Channel::receive \"deadline\" #1\n"
            "1s #1 root op Channel::receive \"heartbeat\" #2\n"
            "1s #1 root op Ticker::reset \"heartbeat\" #2\n"
            "1s #1 root op Ticker::stop \"heartbeat\" #2\n"
            "1s #1 root op Timer::reset \"deadline\" #1\n"
            "1s #1 root op Timer::stop \"deadline\" #1\n"
            "1s #1 root op Channel::receive \"poll timeout\" #3\n"
            "1s #1 root block Channel::receive \"poll timeout\" #3\n");
}

// after_func's name names the thread it starts (in traces and reports); without one it is
// "after_func".
TEST(TimerNames, AfterFuncNamesTheThreadItStarts) {
  const bubble::RunResult r = bubble::run({.trace = true}, [](Runtime& rt) {
    (void)bubble::after_func(
        "flush", 1s, [] {}, rt);
    (void)bubble::after_func(
        2s, [] {}, rt);
    rt.sleep_for(3s);
  });
  EXPECT_EQ(lines_with(r.trace_text(), "scheduler spawn "),
            "0s #0 scheduler spawn root #1\n"
            "1s #0 scheduler spawn flush #2\n"
            "2s #0 scheduler spawn after_func #3\n");
  const std::string m = deadlock_of([](Runtime& rt) {
    bubble::Channel<int> never("never", 0, rt);
    (void)bubble::after_func(
        "flush", 1s, [&] { (void)never.receive(); }, rt);
    rt.sleep_for(2s);
    (void)never.receive();
  });
  EXPECT_NE(m.find("  thread #2 \"flush\": blocked on Channel::receive \"never\" (object #1)"),
            std::string::npos)
      << m;
}

}  // namespace
