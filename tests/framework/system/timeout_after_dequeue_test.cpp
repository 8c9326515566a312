// A timed wait whose deadline passes after a waker has dequeued it but before the waker's unpark
// arrives must park again until that unpark arrives (the Waiter lives on the waiting thread's
// stack, and wakers unpark after releasing the primitive's lock). The interleaving is forced with
// a runtime whose timeouts and unparks the test releases by hand; nothing depends on time.

#include <bubble/runtime.hpp>
#include <bubble/semaphore.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

// Threads and parking of the system runtime, except that a park with a deadline "times out" when
// the test says so, and unpark waits for the test's go-ahead before delivering.
class SteppedRuntime final : public bubble::Runtime {
 public:
  SteppedRuntime() : Runtime(/*controlled=*/false) {}
  std::string_view name() const noexcept override { return "stepped"; }
  bubble::TimePoint now() const noexcept override { return bubble::TimePoint{}; }
  bubble::WallTime wall_now() const noexcept override { return bubble::WallTime{}; }
  std::unique_ptr<bubble::ThreadHandle> do_spawn(std::string name, std::function<void()> body,
                                                 bubble::SourceLocation where) override {
    return bubble::system_runtime().spawn(std::move(name), std::move(body), where);
  }
  void prepare(bubble::Waiter& w) override { bubble::system_runtime().prepare(w); }
  bubble::ParkResult park(bubble::Waiter& w, bubble::TimePoint deadline,
                          const bubble::WaitInfo& what) override {
    if (deadline == bubble::kNoDeadline) {
      parked_without_deadline.store(true);
      return bubble::system_runtime().park(w, deadline, what);
    }
    while (!time_out.load()) std::this_thread::yield();
    return bubble::ParkResult::timed_out;  // Not unparked yet: the test holds the unpark back.
  }
  void unpark(bubble::Waiter& w) noexcept override {
    in_unpark.store(true);
    while (!deliver.load()) std::this_thread::yield();
    bubble::system_runtime().unpark(w);
  }
  bubble::TimerId schedule_at(bubble::TimePoint, std::function<void()>) override { return 0; }
  bool cancel_timer(bubble::TimerId) noexcept override { return false; }
  void schedule_point(const bubble::WaitInfo&) override {}
  void yield(bubble::SourceLocation) override { std::this_thread::yield(); }
  std::uint64_t new_object_id() noexcept override { return 1; }

  std::atomic<bool> time_out{false};
  std::atomic<bool> deliver{false};
  std::atomic<bool> in_unpark{false};
  std::atomic<bool> parked_without_deadline{false};
};

TEST(TimeoutAfterDequeue, TheWaiterParksAgainUntilTheWakersUnparkArrives) {
  SteppedRuntime rt;
  bubble::Semaphore sem(0, rt);
  std::atomic<bool> returned{false};
  bool acquired = false;
  std::thread waiter([&] {
    acquired = sem.try_acquire_until(bubble::TimePoint{} + std::chrono::hours(1));
    returned.store(true);
  });
  while (sem.waiters() != 1) std::this_thread::yield();
  // The releaser dequeues the waiter, hands it the permit, and stops just before its unpark.
  std::thread releaser([&] { sem.release(); });
  while (!rt.in_unpark.load()) std::this_thread::yield();
  // Now the deadline passes: the waiter finds itself dequeued.
  rt.time_out.store(true);
  while (!rt.parked_without_deadline.load() && !returned.load()) std::this_thread::yield();
  EXPECT_TRUE(rt.parked_without_deadline.load());
  EXPECT_FALSE(returned.load()) << "the wait returned before the waker's unpark arrived";
  rt.deliver.store(true);
  releaser.join();
  waiter.join();
  EXPECT_TRUE(acquired);  // The waker's result stands: the permit was handed over.
  EXPECT_EQ(sem.available(), 0);
}

}  // namespace
