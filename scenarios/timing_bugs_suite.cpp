// Scenario suite "timing-bugs": real timing bugs, each written the tempting wrong way and the right
// way; the properties state that the framework catches every wrong version and clears every right
// one, deterministically.
#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/gen/schedule.hpp>
#include <bubble/limiter/ticket_booth.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>
#include <bubble/scenarios/timing_exhibits.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>
#include <bubble/wait_group.hpp>

#include <rapidcheck.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

// The gap between the first two tickets a taker gets after stalling for `stall`, from a booth
// built on a Ticker (the tempting version of the ticket booth: the ticker keeps ticking while the
// booth is stuck on the send, and one stale tick waits in its buffer).
Duration ticker_booth_gap_after_stall(Runtime& rt, Duration interval, Duration stall) {
  Channel<int> tickets(0, rt);
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  Thread booth(
      "ticker-booth",
      [&, ctx = ctx] {
        Ticker ticker(interval, rt);
        for (int i = 0;; ++i) {
          if (tickets.send(i, ctx)) return;
          if (!ticker.channel().receive(ctx)) return;
        }
      },
      rt);
  rt.sleep_for(stall);
  (void)tickets.receive();
  const TimePoint first = rt.now();
  (void)tickets.receive();
  const Duration gap = rt.now() - first;
  cancel();
  return gap;
}

// Property: after any stall longer than one interval, the Ticker-based booth hands out two
// tickets less than an interval apart (the bug is caught, every time), while TicketBooth, which
// re-arms a Timer after each delivery, hands them out exactly one interval apart.
void ticker_booth_bursts_after_a_stall(const Schedule& schedule) {
  const auto interval = std::chrono::milliseconds(testing::draw(rc::gen::inRange(1, 500)));
  const auto stall = interval + std::chrono::milliseconds(testing::draw(rc::gen::inRange(1, 2000)));
  testing::run_property({.strategy = schedule.to_strategy()}, [&](Runtime& rt) {
    BUBBLE_ASSERT(ticker_booth_gap_after_stall(rt, interval, stall) < interval);
    TicketBooth booth(interval, 1, rt);
    rt.sleep_for(stall);
    BUBBLE_ASSERT(!booth.take(Context::background()));
    const TimePoint first = rt.now();
    BUBBLE_ASSERT(!booth.take(Context::background()));
    BUBBLE_ASSERT(rt.now() - first == interval);
  });
}

// What a run of the counter program left: the final counter and the schedule it took.
struct CounterRun {
  int counter = 0;
  Schedule schedule;
};

// Two threads add `increments` each to a counter; with `lock` they hold a Mutex across the
// read-modify-write, without it the read and the write are separate steps with a scheduling
// point between them.
CounterRun run_counter(const Options& options, int increments, bool lock) {
  CounterRun out;
  const RunResult result = run(options, [&](Runtime& rt) {
    Mutex mutex(rt);
    auto add = [&] {
      for (int i = 0; i < increments; ++i) {
        std::unique_lock<Mutex> guard(mutex, std::defer_lock);
        if (lock) guard.lock();
        const int read = out.counter;
        rt.yield();
        out.counter = read + 1;
      }
    };
    Thread a("adder-a", add, rt);
    Thread b("adder-b", add, rt);
  });
  out.schedule = result.schedule;
  return out;
}

// Property: exploration finds the lost update of an unlocked read-modify-write within 100 seeds
// of the random strategy, and replaying the recorded schedule loses exactly the same updates; with
// the Mutex held, no generated schedule loses an update.
void lost_update_is_found_and_replayed(const Schedule& schedule) {
  const int increments = testing::draw(rc::gen::inRange(1, 6));
  bool found = false;
  for (std::uint64_t seed = 1; seed <= 100 && !found; ++seed) {
    const CounterRun explored =
        run_counter({.strategy = Strategy::random(seed)}, increments, false);
    if (explored.counter != 2 * increments) {
      found = true;
      Options replay;
      replay.replay = explored.schedule;
      BUBBLE_ASSERT(run_counter(replay, increments, false).counter == explored.counter);
    }
  }
  BUBBLE_ASSERT(found);
  BUBBLE_ASSERT(run_counter({.strategy = schedule.to_strategy()}, increments, true).counter ==
                2 * increments);
}

// Property (the nested-submit deadlock): when every worker of a pool submits a sub-job to the same
// pool and waits for it, the bubble reports a deadlock that names the pool's workers and what they
// wait on; with a separate pool for the sub-jobs, the same workload completes.
void nested_submit_deadlock_is_reported(const Schedule& schedule) {
  const int workers = testing::draw(rc::gen::inRange(1, 4));
  const int orders = workers + *rc::gen::inRange(0, 3);
  auto workload = [&](Runtime& rt, bool separate_pool) {
    Pool outer({.workers = workers, .queue_capacity = 64, .name = "orders"}, rt);
    Pool payments({.workers = 2, .queue_capacity = 64, .name = "payments"}, rt);
    Pool& sub_pool = separate_pool ? payments : outer;
    WaitGroup orders_done(rt);
    orders_done.add(orders);
    // Every order waits until all orders are queued, so that the sub-jobs queue up behind orders
    // under every interleaving (at least as many orders as workers: all workers end up waiting).
    Notification all_queued(rt);
    for (int i = 0; i < orders; ++i) {
      BUBBLE_ASSERT(!outer.submit(Context::background(), [&](const Context& ctx) {
        all_queued.wait();
        Notification charged(rt);
        BUBBLE_ASSERT(!sub_pool.submit(ctx, [&](const Context&) { charged.notify(); }));
        charged.wait();
        orders_done.done();
      }));
    }
    all_queued.notify();
    orders_done.wait();
    BUBBLE_ASSERT(!outer.shutdown(Context::background()));
    BUBBLE_ASSERT(!payments.shutdown(Context::background()));
  };
  bool deadlocked = false;
  try {
    run({.strategy = schedule.to_strategy()}, [&](Runtime& rt) { workload(rt, false); });
  } catch (const DeadlockError& e) {
    deadlocked = true;
    const std::string report = e.what();
    BUBBLE_ASSERT(report.find("orders/worker") != std::string::npos);
    BUBBLE_ASSERT(report.find("Notification") != std::string::npos);
  }
  BUBBLE_ASSERT(deadlocked);
  testing::run_property({.strategy = schedule.to_strategy()},
                        [&](Runtime& rt) { workload(rt, true); });
}

SuiteResult run_timing_bugs_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "timing-bugs";
  check_property(suite, "a Ticker-based booth bursts after a stall; TicketBooth does not", options,
                 result, log, [] {
                   ticker_booth_bursts_after_a_stall(testing::draw(rc::gen::arbitrary<Schedule>()));
                 });
  check_property(
      suite, "a lost update is found by exploration and replays exactly", options, result, log,
      [] { lost_update_is_found_and_replayed(testing::draw(rc::gen::arbitrary<Schedule>())); });
  check_property(
      suite, "a nested submit into the same pool is reported as a deadlock", options, result, log,
      [] { nested_submit_deadlock_is_reported(testing::draw(rc::gen::arbitrary<Schedule>())); });
  // Property: consumers that wait on a CondVar in a predicate loop never miss the producer's
  // broadcast, whatever the number of consumers, the producer's delay and the schedule (the
  // unconditional wait, the exhibit, deadlocks: tests/scenarios).
  check_property(suite, "a CondVar wait in a predicate loop never misses its wake-up", options,
                 result, log, [] {
                   const RaceCase c = testing::draw(race_case());
                   testing::run_property({.strategy = c.strategy.value}, lost_wakeup_body(true, c));
                 });
  // Property: buyers that check for a ticket and take it under one Mutex never sell more tickets
  // than there are (the unlocked check-then-act, the exhibit, oversells: tests/scenarios).
  check_property(
      suite, "a check-then-act under one lock never oversells", options, result, log, [] {
        const RaceCase c = testing::draw(race_case());
        testing::run_property({.strategy = c.strategy.value}, check_then_act_body(true, c));
      });
  return result;
}

}  // namespace

ScenarioSuite timing_bugs_suite() {
  return {
      "timing-bugs",
      "the framework catches a bursting Ticker booth, a lost update and a nested-submit deadlock; "
      "predicate-loop waits and locked check-then-act hold",
      run_timing_bugs_suite};
}

}  // namespace bubble::scenarios
