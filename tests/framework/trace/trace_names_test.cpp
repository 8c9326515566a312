// Object names in traces: text() and chrome_json() show a named object as `"accounts" #1` (the
// id stays, for uniqueness) on every event that concerns an object (op, block, timeout, acquire,
// release), contexts and timers included, and a bare `#5` for an unnamed one; ids that are
// threads' (spawn, wake, Thread::join) never pick up an object's name. Expected traces are
// exact; "@" stands for kHere's file:line.
//
// A program of its own: the Chrome trace is checked by parsing it (nlohmann-json).

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/timer.hpp>
#include <bubble/trace.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Runtime;
using Json = nlohmann::json;

// Every call below passes this location, so that expected traces name one line.
const bubble::SourceLocation kHere = bubble::SourceLocation::current();

std::string here() {
  return std::string(kHere.file_name()) + ":" + std::to_string(kHere.line());
}

std::string expand(std::string_view golden) {
  std::string out;
  for (const char c : golden) {
    if (c == '@') {
      out += here();
    } else {
      out += c;
    }
  }
  return out;
}

// "writer" takes "accounts" and holds it until the "deadline" timer fires (1s), then stops the
// timer and sends on "results"; "reader" waits for "accounts" meanwhile, then takes and releases
// an unnamed mutex, receives from "results" under the "request" context and waits for that
// context. The root joins the writer, waits 1s in vain for a Notification whose name needs
// escaping, notifies it and cancels "request".
bubble::RunResult named_run() {
  return bubble::run({.trace = true}, [](Runtime& rt) {
    bubble::Mutex accounts("accounts", rt);          // object #1
    bubble::Channel<int> results("results", 0, rt);  // object #2, as the writer's thread id
    auto [request, cancel] = Context::with_cancel(Context::background(), "request");  // #3
    bubble::Timer deadline("deadline", 1s, rt);       // object #4 (its channel)
    bubble::Mutex plain(rt);                          // object #5, unnamed
    bubble::Notification quoted("say \"hi\"\n", rt);  // object #6
    auto writer = rt.spawn(
        "writer",
        [&] {
          accounts.lock(kHere);
          (void)deadline.channel().receive(Context::background(), kHere);
          (void)deadline.stop(kHere);
          accounts.unlock(kHere);
          (void)results.send(1, Context::background(), kHere);
        },
        kHere);
    auto reader = rt.spawn(
        "reader",
        [&, ctx = request] {
          accounts.lock(kHere);
          accounts.unlock(kHere);
          plain.lock(kHere);
          plain.unlock(kHere);
          (void)results.receive(ctx, kHere);
          ctx.wait(kHere);
        },
        kHere);
    writer->join(kHere);
    (void)quoted.wait_for(1s, kHere);  // Times out.
    quoted.notify(kHere);
    cancel();
    reader->join(kHere);
  });
}

TEST(TraceNames, TextShowsNamesBeforeIdsOnEveryObjectEvent) {
  EXPECT_EQ(named_run().trace_text(), expand(R"(0s #0 scheduler spawn root #1
0s #1 root run
0s #1 root spawn writer #2 @
0s #1 root op spawn #2 @
0s #1 root spawn reader #3 @
0s #1 root op spawn #3 @
0s #1 root block Thread::join #2 @
0s #2 writer run
0s #2 writer op Mutex::lock "accounts" #1 @
0s #2 writer acquire Mutex::lock "accounts" #1 @
0s #2 writer op Channel::receive "deadline" #4 @
0s #2 writer block Channel::receive "deadline" #4 @
0s #3 reader run
0s #3 reader op Mutex::lock "accounts" #1 @
0s #3 reader block Mutex::lock "accounts" #1 @
1s #0 scheduler advance
1s #0 scheduler timer #1
1s #2 writer wake
1s #2 writer run
1s #2 writer op Timer::stop "deadline" #4 @
1s #2 writer op Mutex::unlock "accounts" #1 @
1s #2 writer release Mutex::unlock "accounts" #1 held 1s @
1s #3 reader wake #2
1s #2 writer op Mutex::unlock "accounts" #1 @
1s #2 writer op Channel::send "results" #2 @
1s #2 writer block Channel::send "results" #2 @
1s #3 reader run
1s #3 reader acquire Mutex::lock "accounts" #1 waited 1s @
1s #3 reader op Mutex::unlock "accounts" #1 @
1s #3 reader release Mutex::unlock "accounts" #1 held 0s @
1s #3 reader op Mutex::unlock "accounts" #1 @
1s #3 reader op Mutex::lock #5 @
1s #3 reader acquire Mutex::lock #5 @
1s #3 reader op Mutex::unlock #5 @
1s #3 reader release Mutex::unlock #5 held 0s @
1s #3 reader op Mutex::unlock #5 @
1s #3 reader op Channel::receive "results" #2 @
1s #2 writer wake #3
1s #3 reader op Context::wait "request" #3 @
1s #3 reader block Context::wait "request" #3 @
1s #2 writer run
1s #2 writer exit
1s #1 root wake #2
1s #1 root run
1s #1 root op Notification::wait_for "say \"hi\"\n" #6 @
1s #1 root block Notification::wait_for "say \"hi\"\n" #6 @
2s #0 scheduler advance
2s #1 root timeout Notification::wait_for "say \"hi\"\n" #6 @
2s #1 root run
2s #1 root op Notification::notify "say \"hi\"\n" #6 @
2s #3 reader wake #1
2s #1 root block Thread::join #3 @
2s #3 reader run
2s #3 reader exit
2s #1 root wake #3
2s #1 root run
2s #1 root exit
)"));
}

// The events of a Chrome trace named `name` with phase `ph` on thread `tid`.
std::vector<Json> events_named(const Json& trace, std::string_view ph, int tid,
                               std::string_view name) {
  std::vector<Json> out;
  for (const Json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph && e.at("tid") == tid && e.at("name") == name) out.push_back(e);
  }
  return out;
}

// The Chrome trace, parsed: slices and instants carry the object in their name as text() shows
// it, and in their args its id and, when it has one, its name (JSON-escaped, so it parses back
// to the name itself).
TEST(TraceNames, ChromeJsonNamesObjectsInEventNamesAndArgs) {
  const Json trace = Json::parse(named_run().trace_json());
  const auto only = [&](std::string_view ph, int tid, std::string_view name) {
    const std::vector<Json> found = events_named(trace, ph, tid, name);
    EXPECT_EQ(found.size(), 1u) << ph << " on #" << tid << ": " << name;
    return found.empty() ? Json::object() : found[0];
  };
  const auto expect_args = [&](const Json& e, int object, const char* object_name) {
    if (e.empty()) return;
    const Json& args = e.at("args");
    EXPECT_EQ(args.at("object"), object) << e.dump();
    if (object_name != nullptr) {
      EXPECT_EQ(args.value("object_name", "(none)"), object_name) << e.dump();
    } else {
      EXPECT_FALSE(args.contains("object_name")) << e.dump();
    }
    EXPECT_EQ(args.at("where"), here()) << e.dump();
  };
  const auto expect_slice = [&](const Json& e, std::int64_t ts, std::int64_t dur) {
    if (e.empty()) return;
    EXPECT_EQ(e.at("ts"), ts) << e.dump();
    EXPECT_EQ(e.at("dur"), dur) << e.dump();
  };

  // The reader's wait for "accounts" and both holds of it; the writer blocked on the timer.
  const Json wait = only("X", 3, "Mutex \"accounts\" #1 wait");
  expect_slice(wait, 0, 1'000'000);
  expect_args(wait, 1, "accounts");
  const Json writer_held = only("X", 2, "Mutex \"accounts\" #1 held");
  expect_slice(writer_held, 0, 1'000'000);
  expect_args(writer_held, 1, "accounts");
  expect_args(only("X", 3, "Mutex \"accounts\" #1 held"), 1, "accounts");
  const Json blocked = only("X", 3, "Mutex::lock \"accounts\" #1");
  expect_slice(blocked, 0, 1'000'000);
  expect_args(blocked, 1, "accounts");
  const Json on_timer = only("X", 2, "Channel::receive \"deadline\" #4");
  expect_slice(on_timer, 0, 1'000'000);
  expect_args(on_timer, 4, "deadline");
  // The context, and a name with a quote and a newline in it.
  const Json on_context = only("X", 3, "Context::wait \"request\" #3");
  expect_slice(on_context, 1'000'000, 1'000'000);
  expect_args(on_context, 3, "request");
  expect_args(only("i", 1, "timeout Notification::wait_for \"say \\\"hi\\\"\\n\" #6"), 6,
              "say \"hi\"\n");
  expect_args(only("i", 2, "op Timer::stop \"deadline\" #4"), 4, "deadline");
  // An unnamed object: its id only, in the name and in the args.
  expect_args(only("X", 3, "Mutex #5 held"), 5, nullptr);
  expect_args(only("i", 3, "op Mutex::lock #5"), 5, nullptr);
  // A join's id is the joined thread's: the channel that has id #2 lends it no name.
  const std::vector<Json> joins = events_named(trace, "X", 1, "Thread::join");
  ASSERT_EQ(joins.size(), 2u) << trace.dump(1);
  expect_slice(joins[0], 0, 1'000'000);
  expect_args(joins[0], 2, nullptr);
}

}  // namespace
