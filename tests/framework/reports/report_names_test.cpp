// Failure reports that say who waits for whom: object names, the holder of a Mutex, the other
// side of a Channel, the state of a WeightedSemaphore, context ids and names, and cycles in the
// wait-for graph (lock-order inversions) printed first.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/weighted_semaphore.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "../../support/failure_text.hpp"

namespace {

using bubble::test_support::at;
using bubble::test_support::failure_of;

using namespace std::chrono_literals;
using bubble::Runtime;
using bubble::SourceLocation;

// The lines of `text` from the one that starts with `first`, `count` of them ("" if absent).
std::string lines_from(const std::string& text, const std::string& first, int count) {
  std::size_t begin = text.find(first);
  if (begin == std::string::npos) return "";
  std::size_t end = begin;
  for (int i = 0; i < count && end != std::string::npos; ++i) end = text.find('\n', end + 1);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin + 1);
}

TEST(ReportNames, NamedMutexDeadlockLineAndItsHolder) {
  SourceLocation reader_waits, writer_locks;
  const std::string m = failure_of([&](Runtime& rt) {
    bubble::Mutex accounts("accounts");     // object #1
    bubble::Notification never("never");    // object #2
    auto reader = rt.spawn("reader", [&] {  // thread #2
      rt.sleep_for(2s);
      accounts.lock();
      reader_waits = SourceLocation::current(), never.wait(reader_waits);
    });
    auto writer = rt.spawn("writer", [&] {  // thread #3
      rt.sleep_for(3s);
      writer_locks = SourceLocation::current(), accounts.lock(writer_locks);
    });
    writer->join();
    reader->join();
  });
  EXPECT_EQ(lines_from(m, "  thread #2 ", 3),
            "  thread #2 \"reader\": blocked on Notification::wait \"never\" (object #2) at " +
                at(reader_waits) +
                "\n"
                "  thread #3 \"writer\": blocked on Mutex::lock \"accounts\" (object #1) at " +
                at(writer_locks) +
                "\n"
                "    held by thread #2 \"reader\" since +2s\n")
      << m;
  // Nobody waits for the writer in a cycle: the report has no cycle section.
  EXPECT_EQ(m.find("cycle:"), std::string::npos) << m;
}

TEST(ReportNames, UnnamedObjectsKeepTheBareId) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::Mutex m(rt);
    m.lock();
    auto other = rt.spawn("other", [&] { m.lock(); });
    other->join();
  });
  EXPECT_NE(m.find("\"other\": blocked on Mutex::lock (object #1) at "), std::string::npos) << m;
}

// A lock-order inversion: "a" takes audit then accounts, "b" takes accounts then audit. The
// report starts (after its first line) with the cycle, from the thread with the smallest id,
// one line per edge, each edge naming the mutex and the thread that holds it.
TEST(ReportNames, LockOrderCycleComesFirst) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::Mutex audit("audit");        // object #1
    bubble::Mutex accounts("accounts");  // object #2
    auto a = rt.spawn("a", [&] {
      audit.lock();
      rt.sleep_for(1s);
      accounts.lock();
    });
    auto b = rt.spawn("b", [&] {
      accounts.lock();
      rt.sleep_for(1s);
      audit.lock();
    });
    a->join();
    b->join();
  });
  const std::size_t second_line = m.find('\n') + 1;
  EXPECT_EQ(m.substr(second_line, m.find("\n  thread #1 ") + 1 - second_line),
            "cycle: thread #2 \"a\" waits for Mutex \"accounts\" held by thread #3 \"b\"\n"
            "       thread #3 \"b\" waits for Mutex \"audit\" held by thread #2 \"a\"\n")
      << m;
}

// A join's id is the joined thread's: it never picks up the name of the object with that id.
TEST(ReportNames, JoinLineNamesNoObject) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::Mutex first("first");    // object #1
    bubble::Mutex second("second");  // object #2, as the id of the thread joined below
    first.lock();
    auto worker = rt.spawn("worker", [&] { first.lock(); });  // thread #2
    worker->join();
  });
  EXPECT_NE(m.find("  thread #1 \"root\": blocked on Thread::join (object #2) at "),
            std::string::npos)
      << m;
}

// A thread joining the holder of the mutex it is stuck behind: join edges are certain too.
TEST(ReportNames, JoinAndMutexCycle) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::Mutex table("table");  // object #1
    table.lock();
    auto worker = rt.spawn("worker", [&] { table.lock(); });
    worker->join();
  });
  const std::size_t second_line = m.find('\n') + 1;
  EXPECT_EQ(m.substr(second_line, m.find("\n  thread #1 ") + 1 - second_line),
            "cycle: thread #1 \"root\" waits to join thread #2 \"worker\"\n"
            "       thread #2 \"worker\" waits for Mutex \"table\" held by thread #1 \"root\"\n")
      << m;
}

TEST(ReportNames, FullChannelHasNoReceiver) {
  SourceLocation second_send;
  const std::string m = failure_of([&](Runtime& rt) {
    bubble::Channel<int> results("results", 1);  // object #1
    auto producer = rt.spawn("producer", [&] {
      (void)results.send(1);
      second_send = SourceLocation::current(),
      (void)results.send(2, bubble::Context::background(), second_send);
    });
    producer->join();
  });
  EXPECT_EQ(lines_from(m, "  thread #2 ", 2),
            "  thread #2 \"producer\": blocked on Channel::send \"results\" (object #1) at " +
                at(second_send) + "\n    no receiver\n")
      << m;
}

TEST(ReportNames, ReceiversListTheSendersOnTheOtherSide) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::Channel<int> in("in");  // object #1: nobody sends
    auto r1 = rt.spawn("r1", [&] { (void)in.receive(); });
    auto r2 = rt.spawn("r2", [&] { (void)in.receive(); });
    r1->join();
    r2->join();
  });
  EXPECT_NE(m.find("(object #1) at "), std::string::npos) << m;
  EXPECT_NE(m.find("\n    no sender\n"), std::string::npos) << m;
}

TEST(ReportNames, WeightedSemaphoreSaysHowManyUnitsAreFree) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::WeightedSemaphore memory("memory", 5);  // object #1
    (void)memory.acquire(bubble::Context::background(), 4);
    auto big = rt.spawn("big", [&] { (void)memory.acquire(bubble::Context::background(), 3); });
    big->join();
  });
  EXPECT_NE(m.find("\"big\": blocked on WeightedSemaphore::acquire \"memory\" (object #1) at "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("\n    1 of 5 units free, 1 waiting\n"), std::string::npos) << m;
}

TEST(ReportNames, ContextIdAndNameInTheReport) {
  SourceLocation waits;
  std::uint64_t id = 0;
  const std::string m = failure_of([&](Runtime&) {
    bubble::Mutex first;  // object #1: the context gets the next id
    auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background(), "request");
    id = ctx.id();
    waits = SourceLocation::current(), ctx.wait(waits);
  });
  EXPECT_EQ(id, 2u);
  EXPECT_EQ(bubble::Context::background().id(), 0u);
  EXPECT_NE(m.find(": blocked on Context::wait \"request\" (object #2) at " + at(waits) + "\n"),
            std::string::npos)
      << m;
}

// The system runtime ignores names: named primitives work there as unnamed ones do.
TEST(ReportNames, SystemRuntimeAcceptsNames) {
  bubble::Mutex m("accounts", bubble::system_runtime());
  m.lock();
  m.unlock();
  EXPECT_NE(m.id(), 0u);
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background(), "request");
  EXPECT_NE(ctx.id(), 0u);
}

}  // namespace
