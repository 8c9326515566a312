// The ConcurrencyLimiter property of the limiter suite: several takers acquire weighted units,
// hold them and release them; the admission times equal those of a model of a weighted FIFO
// semaphore, exactly, and no more than the limit is ever in flight.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "limiter_gen.hpp"
#include "limiter_properties.hpp"

namespace bubble::scenarios {
namespace {

// Taker i arrives at arrive_ms + i microseconds (so that no two events of the run share an
// instant unless they are releases started by the same arrival: the model is then exact), asks
// for `weight` units, gives up after give_up_ms if still waiting (-1: never), and holds the units
// for hold_ms.
struct Taker {
  int arrive_ms = 0;
  std::int64_t weight = 1;
  int hold_ms = 1;
  int give_up_ms = -1;
};

struct ConcurrencyWorkload {
  std::int64_t limit = 1;
  std::vector<Taker> takers;
};

void showValue(const ConcurrencyWorkload& w, std::ostream& os) {
  os << "ConcurrencyWorkload{limit=" << w.limit << ", takers=[";
  for (std::size_t i = 0; i < w.takers.size(); ++i) {
    const Taker& t = w.takers[i];
    os << (i == 0 ? "" : ", ") << "Taker{arrive=" << t.arrive_ms << "ms+" << i
       << "us, weight=" << t.weight << ", hold=" << t.hold_ms << "ms, give_up="
       << (t.give_up_ms < 0 ? std::string("never") : std::to_string(t.give_up_ms) + "ms") << "}";
  }
  os << "]}";
}

rc::Gen<ConcurrencyWorkload> concurrency_workload() {
  return rc::gen::resize(100, rc::gen::exec([] {
                           ConcurrencyWorkload w;
                           w.limit = *rc::gen::inRange<std::int64_t>(1, 5);
                           const std::int64_t limit = w.limit;
                           w.takers =
                               *list_of(8, rc::gen::exec([limit] {
                                          Taker t;
                                          t.arrive_ms = *grid_ms(40, 5);
                                          t.weight = *rc::gen::inRange<std::int64_t>(1, limit + 1);
                                          t.hold_ms = *rc::gen::inRange(1, 30);
                                          t.give_up_ms = *sometimes(30, rc::gen::inRange(1, 40));
                                          return t;
                                        }));
                           return w;
                         }));
}

// What happened to a taker: admitted at `at`, or gave up at `at`.
struct Outcome {
  bool admitted = false;
  Duration at{};
  bool operator==(const Outcome&) const = default;
};

std::string text(const Outcome& o) {
  return std::string(o.admitted ? "admitted at " : "gave up at ") + format_duration(o.at);
}

// A weighted semaphore with a FIFO queue and no overtaking (golang.org/x/sync/semaphore's rules),
// run as a discrete-event simulation of the workload.
std::vector<Outcome> model(const ConcurrencyWorkload& w) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  const std::size_t n = w.takers.size();
  std::vector<Outcome> out(n);
  std::vector<bool> done(n, false);
  std::vector<std::optional<Duration>> release_at(n);
  std::deque<std::size_t> queue;
  std::int64_t free = w.limit;
  auto arrival = [&](std::size_t i) {
    return Duration(milliseconds(w.takers[i].arrive_ms)) + microseconds(i);
  };
  auto admit = [&](std::size_t i, Duration t) {
    free -= w.takers[i].weight;
    out[i] = {true, t};
    done[i] = true;
    release_at[i] = t + milliseconds(w.takers[i].hold_ms);
  };
  auto admit_from_head = [&](Duration t) {
    while (!queue.empty() && w.takers[queue.front()].weight <= free) {
      admit(queue.front(), t);
      queue.pop_front();
    }
  };
  std::vector<bool> arrived(n, false);
  for (;;) {
    // The next instant anything happens: an arrival, a give-up, a release.
    std::optional<Duration> next;
    auto consider = [&](Duration t) {
      if (!next || t < *next) next = t;
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (!arrived[i]) consider(arrival(i));
      if (arrived[i] && !done[i] && w.takers[i].give_up_ms >= 0) {
        consider(arrival(i) + milliseconds(w.takers[i].give_up_ms));
      }
      if (release_at[i]) consider(*release_at[i]);
    }
    if (!next) break;
    const Duration t = *next;
    for (std::size_t i = 0; i < n; ++i) {
      if (release_at[i] == t) {
        free += w.takers[i].weight;
        release_at[i].reset();
      }
    }
    admit_from_head(t);
    for (std::size_t i = 0; i < n; ++i) {
      if (arrived[i] && !done[i] && w.takers[i].give_up_ms >= 0 &&
          arrival(i) + milliseconds(w.takers[i].give_up_ms) == t) {
        out[i] = {false, t};
        done[i] = true;
        queue.erase(std::find(queue.begin(), queue.end(), i));
        admit_from_head(t);
      }
      if (!arrived[i] && arrival(i) == t) {
        arrived[i] = true;
        if (queue.empty() && w.takers[i].weight <= free) {
          admit(i, t);
        } else {
          queue.push_back(i);
        }
      }
    }
  }
  return out;
}

}  // namespace

void concurrency_limiter_is_a_weighted_fifo() {
  const ConcurrencyWorkload w = testing::draw(concurrency_workload());
  const Schedule schedule = testing::draw(bubble::gen::schedule());
  const std::vector<Outcome> want = model(w);
  testing::run_property(
      {.strategy = schedule.to_strategy(),
       .max_steps = kCaseSteps,
       .max_virtual_time = kCaseVirtualTime},
      [&](Runtime& rt) {
        using std::chrono::microseconds;
        using std::chrono::milliseconds;
        ConcurrencyLimiter limiter(w.limit, rt);
        const TimePoint start = rt.now();
        std::vector<Outcome> got(w.takers.size());
        std::int64_t in_flight = 0;
        std::int64_t most_in_flight = 0;
        {
          std::vector<Thread> threads;
          for (std::size_t i = 0; i < w.takers.size(); ++i) {
            threads.emplace_back(
                "taker",
                [&, i] {
                  const Taker& t = w.takers[i];
                  rt.sleep_until(start + milliseconds(t.arrive_ms) + microseconds(i));
                  Context ctx = Context::background();
                  std::optional<std::pair<Context, CancelFunc>> deadline;
                  if (t.give_up_ms >= 0) {
                    deadline.emplace(Context::with_timeout(ctx, milliseconds(t.give_up_ms), rt));
                    ctx = deadline->first;
                  }
                  const std::error_code ec = limiter.acquire(ctx, t.weight);
                  got[i] = {!ec, rt.now() - start};
                  if (deadline) deadline->second();
                  if (ec) {
                    BUBBLE_ASSERT(ec == errc::deadline_exceeded);
                    return;
                  }
                  in_flight += t.weight;
                  most_in_flight = std::max(most_in_flight, in_flight);
                  rt.sleep_for(milliseconds(t.hold_ms));
                  in_flight -= t.weight;
                  limiter.release(t.weight);
                },
                rt);
          }
        }
        if (most_in_flight > w.limit) {
          BUBBLE_FAIL(std::to_string(most_in_flight) + " units in flight at once, limit " +
                      std::to_string(w.limit));
        }
        for (std::size_t i = 0; i < w.takers.size(); ++i) {
          if (!(got[i] == want[i])) {
            BUBBLE_FAIL("taker " + std::to_string(i) + " was " + text(got[i]) +
                        "; a weighted FIFO semaphore: " + text(want[i]));
          }
        }
        BUBBLE_ASSERT(limiter.in_flight() == 0);
      });
}

}  // namespace bubble::scenarios
