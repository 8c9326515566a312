// The misuse property of the primitives suite: each misuse that a header promises to check, with
// a generated offending value, throws the promised exception naming the value and leaves the
// object as it was.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/latch.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/scenarios/primitive_properties.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/time.hpp>
#include <bubble/timer.hpp>
#include <bubble/wait_group.hpp>
#include <bubble/weighted_semaphore.hpp>

#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

// Runs `misuse` and fails the case unless it throws exactly an E (not a subclass of it that
// means something else: std::invalid_argument for a bad argument, std::logic_error for a bad
// call) whose message contains `value`.
template <class E>
void expect_refused(const std::string& what, const std::string& value,
                    const std::function<void()>& misuse) {
  try {
    misuse();
  } catch (const std::exception& e) {
    const bool right_type = typeid(e) == typeid(E);
    if (!right_type) {
      BUBBLE_FAIL(what + " threw " + testing::detail::type_name(typeid(e).name()) + " (" +
                  e.what() + "), expected " + testing::detail::type_name(typeid(E).name()));
    }
    if (std::string(e.what()).find(value) == std::string::npos) {
      BUBBLE_FAIL(what + " threw '" + e.what() + "', which does not name the value " + value);
    }
    return;
  }
  BUBBLE_FAIL(what + " was accepted silently; its header promises " +
              testing::detail::type_name(typeid(E).name()));
}

// Fails the case unless `actual` == `expected`: the misuse changed nothing.
template <class T>
void expect_unchanged(const std::string& what, const T& actual, const T& expected) {
  if (actual != expected) {
    BUBBLE_FAIL("after " + what + ", the object changed: " + std::to_string(actual) +
                " instead of " + std::to_string(expected));
  }
}

// One checked misuse with the offending magnitude k >= 1, in a bubble.
struct Misuse {
  const char* name;
  void (*check)(Runtime& rt, std::int64_t k);
};

std::string num(std::int64_t v) {
  return std::to_string(v);
}
std::string ms_text(std::int64_t v) {
  return format_duration(std::chrono::milliseconds(v));
}

PoolOptions small_pool_options() {
  PoolOptions o;
  o.workers = 1;
  o.queue_capacity = 4;
  return o;
}

const std::vector<Misuse>& misuses() {
  static const std::vector<Misuse> all = {
      {"Semaphore(negative)",
       [](Runtime& rt, std::int64_t k) {
         expect_refused<std::invalid_argument>("Semaphore(" + num(-k) + ")", num(-k),
                                               [&] { Semaphore s(-k, rt); });
       }},
      {"Semaphore::release(negative)",
       [](Runtime& rt, std::int64_t k) {
         Semaphore s(1, rt);
         expect_refused<std::invalid_argument>("release(" + num(-k) + ")", num(-k),
                                               [&] { s.release(-k); });
         expect_unchanged("release(" + num(-k) + ")", s.available(), std::ptrdiff_t{1});
       }},
      {"WeightedSemaphore(negative)",
       [](Runtime& rt, std::int64_t k) {
         expect_refused<std::invalid_argument>("WeightedSemaphore(" + num(-k) + ")", num(-k),
                                               [&] { WeightedSemaphore s(-k, rt); });
       }},
      {"WeightedSemaphore::acquire(negative or above the size)",
       [](Runtime& rt, std::int64_t k) {
         WeightedSemaphore s(4, rt);
         for (const std::int64_t n : {-k, 4 + k}) {
           expect_refused<std::invalid_argument>("acquire(ctx, " + num(n) + ")", num(n), [&] {
             (void)s.acquire(Context::background(), n);
           });
           expect_refused<std::invalid_argument>("try_acquire(" + num(n) + ")", num(n),
                                                 [&] { (void)s.try_acquire(n); });
           expect_unchanged("acquire(ctx, " + num(n) + ")", s.in_use(), std::int64_t{0});
         }
       }},
      {"WeightedSemaphore::release(negative or more than held)",
       [](Runtime& rt, std::int64_t k) {
         WeightedSemaphore s(4, rt);
         if (!s.try_acquire(2)) BUBBLE_FAIL("try_acquire(2) on a free semaphore of 4 failed");
         expect_refused<std::invalid_argument>("release(" + num(-k) + ")", num(-k),
                                               [&] { s.release(-k); });
         expect_refused<std::logic_error>("release(" + num(2 + k) + ") with 2 held", num(2 + k),
                                          [&] { s.release(2 + k); });
         expect_unchanged("release(" + num(2 + k) + ")", s.in_use(), std::int64_t{2});
       }},
      {"Latch(negative), count_down(negative or past zero)",
       [](Runtime& rt, std::int64_t k) {
         expect_refused<std::invalid_argument>("Latch(" + num(-k) + ")", num(-k),
                                               [&] { Latch l(-k, rt); });
         Latch l(3, rt);
         expect_refused<std::invalid_argument>("count_down(" + num(-k) + ")", num(-k),
                                               [&] { l.count_down(-k); });
         expect_refused<std::logic_error>("count_down(" + num(3 + k) + ") with 3 left", num(3 + k),
                                          [&] { l.count_down(3 + k); });
         l.count_down(2);
         if (l.try_wait()) BUBBLE_FAIL("a latch of 3 counted down by 2 after misuses is released");
         l.count_down(1);
         if (!l.try_wait()) BUBBLE_FAIL("a latch of 3 counted down by 3 is not released");
       }},
      {"WaitGroup::add below zero",
       [](Runtime& rt, std::int64_t k) {
         WaitGroup wg(rt);
         wg.add(1);
         expect_refused<std::logic_error>("add(" + num(-1 - k) + ") with counter 1", num(-1 - k),
                                          [&] { wg.add(-1 - k); });
         bool waited = false;
         Thread waiter(
             "waiter",
             [&] {
               wg.wait();
               waited = true;
             },
             rt);
         bubble::wait();
         if (waited)
           BUBBLE_FAIL("a wait group whose add(" + num(-1 - k) +
                       ") failed let a wait "
                       "return with its counter still 1");
         wg.done();
       }},
      {"Pool options",
       [](Runtime& rt, std::int64_t k) {
         auto refused = [&](const char* field, const std::string& value, auto set) {
           PoolOptions o = small_pool_options();
           set(o);
           expect_refused<std::invalid_argument>(std::string("Pool with ") + field + " = " + value,
                                                 value, [&] { Pool p(o, rt); });
         };
         refused("workers", num(1 - k),
                 [&](PoolOptions& o) { o.workers = static_cast<int>(1 - k); });
         refused("queue_capacity", num(1 - k), [&](PoolOptions& o) { o.queue_capacity = 1 - k; });
         refused("room_to_resume", num(-k), [&](PoolOptions& o) { o.room_to_resume = -k; });
         refused("room_to_resume", num(4 + k), [&](PoolOptions& o) { o.room_to_resume = 4 + k; });
         refused("aging_step", ms_text(-k),
                 [&](PoolOptions& o) { o.aging_step = std::chrono::milliseconds(-k); });
         refused("max_queued_per_tenant", num(-k),
                 [&](PoolOptions& o) { o.max_queued_per_tenant = -k; });
         refused("max_running_per_tenant", num(-k),
                 [&](PoolOptions& o) { o.max_running_per_tenant = static_cast<int>(-k); });
       }},
      {"Pool::submit with a negative expected duration",
       [](Runtime& rt, std::int64_t k) {
         Pool pool(small_pool_options(), rt);
         JobOptions opts;
         opts.expected_duration = std::chrono::milliseconds(-k);
         expect_refused<std::invalid_argument>("submit with expected_duration " + ms_text(-k),
                                               ms_text(-k), [&] {
                                                 (void)pool.submit(
                                                     Context::background(), [] {}, opts);
                                               });
         expect_unchanged("submit with expected_duration " + ms_text(-k), pool.stats().submitted,
                          std::uint64_t{0});
       }},
      {"RateLimiter(n < 1 or interval <= 0)",
       [](Runtime& rt, std::int64_t k) {
         Pool pool(small_pool_options(), rt);
         expect_refused<std::invalid_argument>("RateLimiter n = " + num(1 - k), num(1 - k), [&] {
           RateLimiter l(pool, static_cast<int>(1 - k), 10ms);
         });
         expect_refused<std::invalid_argument>(
             "RateLimiter interval = " + ms_text(-k), ms_text(-k),
             [&] { RateLimiter l(pool, 1, std::chrono::milliseconds(-k)); });
       }},
      {"ConcurrencyLimiter(limit < 1), weights outside [1, limit]",
       [](Runtime& rt, std::int64_t k) {
         expect_refused<std::invalid_argument>("ConcurrencyLimiter(" + num(1 - k) + ")", num(1 - k),
                                               [&] { ConcurrencyLimiter l(1 - k, rt); });
         ConcurrencyLimiter l(4, rt);
         for (const std::int64_t w : {1 - k, 4 + k}) {
           expect_refused<std::invalid_argument>("acquire(ctx, " + num(w) + ")", num(w), [&] {
             (void)l.acquire(Context::background(), w);
           });
         }
         expect_refused<std::invalid_argument>("release(" + num(1 - k) + ")", num(1 - k),
                                               [&] { l.release(1 - k); });
         if (!l.try_acquire(4)) BUBBLE_FAIL("after misuses, a limiter of 4 refused 4 units");
         l.release(4);
       }},
      {"TokenBucket(negative rate or burst)",
       [](Runtime& rt, std::int64_t k) {
         expect_refused<std::invalid_argument>("TokenBucket burst " + num(-k), num(-k), [&] {
           TokenBucket b(1.0, static_cast<int>(-k), rt);
         });
         TokenBucket b(1.0, 1, rt);
         expect_refused<std::invalid_argument>("TokenBucket::reserve(" + num(-k) + ")", num(-k),
                                               [&] { (void)b.reserve(static_cast<int>(-k)); });
         if (!b.allow()) BUBBLE_FAIL("after misuses, a full bucket of 1 refused allow()");
       }},
      {"Ticker(period <= 0)",
       [](Runtime& rt, std::int64_t k) {
         expect_refused<std::invalid_argument>(
             "Ticker(" + ms_text(1 - k) + ")", ms_text(1 - k),
             [&] { Ticker t(std::chrono::milliseconds(1 - k), rt); });
       }},
  };
  return all;
}

}  // namespace

void misuse_is_reported_and_changes_nothing() {
  const std::size_t index =
      static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, misuses().size()));
  const Misuse& m = misuses()[index];
  bubble::testing::detail::show_drawn(std::string("misuse:\n") + m.name);
  const auto k = testing::draw(rc::gen::inRange<std::int64_t>(1, 1000));
  testing::run_property({}, [&](Runtime& rt) { m.check(rt, k); });
}

}  // namespace bubble::scenarios
