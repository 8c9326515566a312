// bubble::Thread on the system runtime.

#include <bubble/notification.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

TEST(Thread, RunsTheBodyAndJoinWaitsForIt) {
  int value = 0;
  bubble::Thread t("worker", [&] { value = 1; });
  EXPECT_TRUE(t.joinable());
  EXPECT_EQ(t.name(), "worker");
  t.join();
  EXPECT_FALSE(t.joinable());
  EXPECT_EQ(t.name(), "worker");
  EXPECT_EQ(value, 1);
}

TEST(Thread, DestructorJoins) {
  int value = 0;
  bubble::Notification go;
  {
    bubble::Thread t("worker", [&] {
      go.wait();
      value = 2;
    });
    go.notify();
  }  // Joins here: the write below the wait is visible.
  EXPECT_EQ(value, 2);
}

TEST(Thread, JoiningAThreadThatIsNotJoinableThrowsNamingIt) {
  bubble::Thread t("twice", [] {});
  t.join();
  try {
    t.join();
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "bubble::Thread::join: thread 'twice' is not joinable");
  }
  bubble::Thread empty;
  EXPECT_FALSE(empty.joinable());
  EXPECT_THROW(empty.join(), std::logic_error);
}

TEST(Thread, RunsOnTheGivenRuntime) {
  bubble::Runtime* seen = nullptr;
  bubble::Thread(
      "worker", [&] { seen = &bubble::current_runtime(); }, bubble::system_runtime())
      .join();
  EXPECT_EQ(seen, &bubble::system_runtime());
}

TEST(Thread, AcceptsMoveOnlyCallables) {
  auto box = std::make_unique<int>(5);
  int seen = 0;
  bubble::Thread t("worker", [box = std::move(box), &seen] { seen = *box; });
  t.join();
  EXPECT_EQ(seen, 5);
}

TEST(Thread, MoveTransfersTheThreadAndMoveAssignmentJoinsTheOldOne) {
  int first = 0;
  int second = 0;
  bubble::Thread a("first", [&] { first = 1; });
  bubble::Thread b(std::move(a));
  EXPECT_FALSE(a.joinable());  // NOLINT(bugprone-use-after-move): moved-from state is specified.
  EXPECT_TRUE(b.joinable());
  EXPECT_EQ(b.name(), "first");
  b = bubble::Thread("second", [&] { second = 2; });  // Joins "first" before taking "second".
  EXPECT_EQ(first, 1);
  EXPECT_EQ(b.name(), "second");
  b.join();
  EXPECT_EQ(second, 2);
}

}  // namespace
