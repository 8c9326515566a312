// Traces: the user's markers (trace_note, trace_span), lock waits and holds with their virtual
// durations, and the trace levels. Expected traces are exact; "@" stands for kHere's file:line.

#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/trace.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;
using bubble::TraceLevel;

// Every call below passes this location, so that expected traces name one line.
const bubble::SourceLocation kHere = bubble::SourceLocation::current();

std::string expand(std::string_view golden) {
  const std::string here = std::string(kHere.file_name()) + ":" + std::to_string(kHere.line());
  std::string out;
  for (const char c : golden) {
    if (c == '@') {
      out += here;
    } else {
      out += c;
    }
  }
  return out;
}

// "writer" takes the mutex and holds it for 1s (sleeping); "reader" asks for it at 0s, waits 1s,
// holds it 0.5s; the root marks the whole as a span and adds a note at the end.
bubble::RunResult contended_run(TraceLevel level) {
  return bubble::run({.trace = true, .trace_level = level}, [](Runtime& rt) {
    auto span = bubble::trace_span("both", kHere);
    bubble::Mutex m(rt);
    auto writer = rt.spawn(
        "writer",
        [&] {
          m.lock(kHere);
          rt.sleep_for(1s, kHere);
          m.unlock(kHere);
        },
        kHere);
    auto reader = rt.spawn(
        "reader",
        [&] {
          m.lock(kHere);
          rt.sleep_for(500ms, kHere);
          m.unlock(kHere);
        },
        kHere);
    writer->join(kHere);
    reader->join(kHere);
    bubble::trace_note("both done", kHere);
  });
}

// The lock wait and hold and the user's span and note, with their virtual durations. The
// unlock has two scheduling points, before and after the release (the waiter is woken between).
TEST(TraceMarkers, TextShowsLockWaitsHoldsSpansAndNotesWithVirtualDurations) {
  EXPECT_EQ(contended_run(TraceLevel::every_event).trace_text(),
            expand(R"(0s #0 scheduler spawn root #1
0s #1 root run
0s #1 root span_begin both @
0s #1 root spawn writer #2 @
0s #1 root op spawn #2 @
0s #1 root spawn reader #3 @
0s #1 root op spawn #3 @
0s #1 root block Thread::join #2 @
0s #2 writer run
0s #2 writer op Mutex::lock #1 @
0s #2 writer acquire Mutex::lock #1 @
0s #2 writer block sleep @
0s #3 reader run
0s #3 reader op Mutex::lock #1 @
0s #3 reader block Mutex::lock #1 @
1s #0 scheduler advance
1s #2 writer timeout sleep @
1s #2 writer run
1s #2 writer op Mutex::unlock #1 @
1s #2 writer release Mutex::unlock #1 held 1s @
1s #3 reader wake #2
1s #2 writer op Mutex::unlock #1 @
1s #2 writer exit
1s #1 root wake #2
1s #3 reader run
1s #3 reader acquire Mutex::lock #1 waited 1s @
1s #3 reader block sleep @
1s #1 root run
1s #1 root block Thread::join #3 @
1.5s #0 scheduler advance
1.5s #3 reader timeout sleep @
1.5s #3 reader run
1.5s #3 reader op Mutex::unlock #1 @
1.5s #3 reader release Mutex::unlock #1 held 500ms @
1.5s #3 reader op Mutex::unlock #1 @
1.5s #3 reader exit
1.5s #1 root wake #3
1.5s #1 root run
1.5s #1 root note both done @
1.5s #1 root span_end both lasted 1.5s @
1.5s #1 root exit
)"));
}

// In the Chrome trace: the wait (lock call to acquisition) and the holds (acquisition to unlock)
// as slices with their virtual lengths, the span as a slice, the note as an instant.
TEST(TraceMarkers, ChromeJsonHasWaitHeldAndSpanSlicesAndNoteInstants) {
  const std::string json = contended_run(TraceLevel::every_event).trace_json();
  const std::string args = expand(R"(,"args":{"object":1,"where":"@"}})");
  for (
      const std::string& slice : {
          R"({"ph":"X","pid":1,"tid":3,"ts":0,"dur":1000000,"name":"Mutex #1 wait")" + args,
          R"({"ph":"X","pid":1,"tid":2,"ts":0,"dur":1000000,"name":"Mutex #1 held")" + args,
          R"({"ph":"X","pid":1,"tid":3,"ts":1000000,"dur":500000,"name":"Mutex #1 held")" + args,
          R"({"ph":"X","pid":1,"tid":3,"ts":0,"dur":1000000,"name":"Mutex::lock #1")" + args,
          expand(
              R"({"ph":"X","pid":1,"tid":1,"ts":0,"dur":1500000,"name":"both","args":{"object":0,"where":"@"}})"),
          expand(
              R"({"ph":"i","s":"t","pid":1,"tid":1,"ts":1500000,"name":"both done","args":{"object":0,"where":"@"}})"),
      }) {
    EXPECT_NE(json.find("\n" + slice + ",\n"), std::string::npos) << slice << "\n" << json;
  }
  // An uncontended acquisition is no slice of its own (its hold is).
  EXPECT_EQ(json.find(R"("name":"Mutex #1 wait")"), json.rfind(R"("name":"Mutex #1 wait")"));
}

// 1000 lock/unlock pairs nobody waits for, then one contended pair, in a span.
bubble::RunResult many_locks_run(TraceLevel level) {
  return bubble::run({.trace = true, .trace_level = level}, [](Runtime& rt) {
    bubble::Mutex m(rt);
    {
      auto span = bubble::trace_span("uncontended", kHere);
      for (int i = 0; i < 1000; ++i) {
        m.lock(kHere);
        m.unlock(kHere);
      }
    }
    m.lock(kHere);
    auto other = rt.spawn(
        "other",
        [&] {
          m.lock(kHere);
          m.unlock(kHere);
        },
        kHere);
    rt.sleep_for(2s, kHere);
    m.unlock(kHere);
    other->join(kHere);
    bubble::trace_note("done", kHere);
  });
}

TEST(TraceMarkers, SkipUncontendedLocksDropsThePairsNobodyWaitedFor) {
  const bubble::RunResult r = many_locks_run(TraceLevel::skip_uncontended_locks);
  EXPECT_EQ(r.trace_text(), expand(R"(0s #0 scheduler spawn root #1
0s #1 root run
0s #1 root span_begin uncontended @
0s #1 root span_end uncontended lasted 0s @
0s #1 root op Mutex::lock #1 @
0s #1 root acquire Mutex::lock #1 @
0s #1 root spawn other #2 @
0s #1 root op spawn #2 @
0s #1 root block sleep @
0s #2 other run
0s #2 other op Mutex::lock #1 @
0s #2 other block Mutex::lock #1 @
2s #0 scheduler advance
2s #1 root timeout sleep @
2s #1 root run
2s #1 root op Mutex::unlock #1 @
2s #1 root release Mutex::unlock #1 held 2s @
2s #2 other wake #1
2s #1 root op Mutex::unlock #1 @
2s #1 root block Thread::join #2 @
2s #2 other run
2s #2 other acquire Mutex::lock #1 waited 2s @
2s #2 other op Mutex::unlock #1 @
2s #2 other release Mutex::unlock #1 held 0s @
2s #2 other op Mutex::unlock #1 @
2s #2 other exit
2s #1 root wake #2
2s #1 root run
2s #1 root note done @
2s #1 root exit
)"));
  // Every event is still recorded; the level only decides what the trace shows.
  EXPECT_GT(r.trace.events().size(), 4000u);
}

TEST(TraceMarkers, BlockingOnlyKeepsBlocksContendedLocksAndMarkers) {
  EXPECT_EQ(many_locks_run(TraceLevel::blocking_only).trace_text(),
            expand(R"(0s #0 scheduler spawn root #1
0s #1 root span_begin uncontended @
0s #1 root span_end uncontended lasted 0s @
0s #1 root acquire Mutex::lock #1 @
0s #1 root spawn other #2 @
0s #1 root block sleep @
0s #2 other block Mutex::lock #1 @
2s #0 scheduler advance
2s #1 root timeout sleep @
2s #1 root release Mutex::unlock #1 held 2s @
2s #2 other wake #1
2s #1 root block Thread::join #2 @
2s #2 other acquire Mutex::lock #1 waited 2s @
2s #2 other release Mutex::unlock #1 held 0s @
2s #2 other exit
2s #1 root wake #2
2s #1 root note done @
2s #1 root exit
)"));
}

// Outside a bubble and in a bubble without a trace the markers do nothing, and in a traced bubble
// they are not scheduling points: the schedule and the step count are those of a run without them.
TEST(TraceMarkers, MarkersDoNothingOutsideATracedBubbleAndChangeNoSchedule) {
  bubble::trace_note("outside");
  { auto span = bubble::trace_span("outside"); }
  auto program = [](bool markers) {
    return [markers](Runtime& rt) {
      bubble::Mutex m(rt);
      auto t = rt.spawn("t", [&] {
        std::lock_guard g(m);
        if (markers) bubble::trace_note("in t");
      });
      {
        auto span =
            markers ? std::optional<bubble::TraceSpan>(std::in_place, "root", kHere) : std::nullopt;
        std::lock_guard g(m);
      }
      t->join();
    };
  };
  for (const bool trace : {false, true}) {
    const bubble::Strategy s = bubble::Strategy::random(3);
    const bubble::RunResult with = bubble::run({.strategy = s, .trace = trace}, program(true));
    const bubble::RunResult without = bubble::run({.strategy = s, .trace = trace}, program(false));
    EXPECT_EQ(with.schedule.picks, without.schedule.picks);
    EXPECT_EQ(with.steps, without.steps);
    EXPECT_EQ(with.trace.events().size(), trace ? without.trace.events().size() + 3 : 0u);
  }
}

}  // namespace
