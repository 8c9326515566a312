// The stop property of the limiter suite: submits and try_submits race RateLimiter::stop under
// generated schedules, and nothing is admitted, spent or refilled once stop() has returned.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/scenarios/show.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "limiter_properties.hpp"

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

struct StopCall {
  bool try_submit = false;
  int gap_ms = 0;  // before the call
};

struct StopCase {
  int n = 1;
  int interval_ms = 0;  // 0: one hour (no refill before stop)
  int stop_ms = 0;
  std::vector<std::vector<StopCall>> submitters;
  StrategyValue strategy;
};

void showValue(const StopCase& c, std::ostream& os) {
  os << "StopCase{n=" << c.n << ", interval="
     << (c.interval_ms == 0 ? std::string("1h") : std::to_string(c.interval_ms) + "ms")
     << ", stop at " << c.stop_ms << "ms, submitters=[";
  for (std::size_t s = 0; s < c.submitters.size(); ++s) {
    os << (s == 0 ? "[" : ", [");
    for (std::size_t i = 0; i < c.submitters[s].size(); ++i) {
      os << (i == 0 ? "" : ", ") << "after " << c.submitters[s][i].gap_ms << "ms "
         << (c.submitters[s][i].try_submit ? "try_submit" : "submit");
    }
    os << "]";
  }
  os << "], strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<StopCase> stop_case() {
  return rc::gen::exec([] {
    StopCase c;
    c.n = *rc::gen::inRange(1, 4);
    c.interval_ms =
        *rc::gen::weightedOneOf<int>({{1, rc::gen::just(0)}, {1, rc::gen::inRange(2, 11)}});
    c.stop_ms = *rc::gen::inRange(0, 8);
    const int submitters = *rc::gen::inRange(1, 5);
    for (int s = 0; s < submitters; ++s) {
      std::vector<StopCall> calls(static_cast<std::size_t>(*rc::gen::inRange(1, 5)));
      for (StopCall& call : calls) {
        call.try_submit = *rc::gen::arbitrary<bool>();
        call.gap_ms = *rc::gen::inRange(0, 4);
      }
      c.submitters.push_back(std::move(calls));
    }
    c.strategy = *case_strategy();
    return c;
  });
}

}  // namespace

void rate_limiter_stop_races_submits() {
  const StopCase c = testing::draw(stop_case());
  Options options;
  options.strategy = c.strategy.value;
  options.max_steps = 200'000;
  options.max_virtual_time = 2h;
  testing::run_property(options, [&](Runtime& rt) {
    // Every step of the run in one order: the bubble runs one thread at a time.
    int step = 0;
    int stop_returned = -1;  // the step at which stop() returned
    int tokens_after_stop = -1;
    const std::size_t n = c.submitters.size();
    std::vector<std::vector<int>> runs(n);
    std::vector<std::vector<int>> started(n);
    std::vector<std::vector<std::error_code>> results(n);
    for (std::size_t s = 0; s < n; ++s) {
      runs[s].assign(c.submitters[s].size(), 0);
      started[s].assign(c.submitters[s].size(), -1);
      results[s].resize(c.submitters[s].size());
    }
    PoolOptions po;
    po.workers = 1;
    po.queue_capacity = 64;  // never full: the pool refuses nothing, so nothing is refunded
    Pool pool(po, rt);
    const Duration interval =
        c.interval_ms == 0 ? Duration(1h) : Duration(std::chrono::milliseconds(c.interval_ms));
    {
      RateLimiter limiter(pool, c.n, interval);
      std::vector<std::unique_ptr<ThreadHandle>> threads;
      for (std::size_t s = 0; s < n; ++s) {
        threads.push_back(rt.spawn("submitter-" + std::to_string(s), [&, s] {
          for (std::size_t i = 0; i < c.submitters[s].size(); ++i) {
            rt.sleep_for(std::chrono::milliseconds(c.submitters[s][i].gap_ms));
            Job job = [&runs, s, i] { ++runs[s][i]; };
            started[s][i] = ++step;
            results[s][i] = c.submitters[s][i].try_submit
                                ? limiter.try_submit(std::move(job))
                                : limiter.submit(Context::background(), std::move(job));
          }
        }));
      }
      threads.push_back(rt.spawn("stopper", [&] {
        rt.sleep_for(std::chrono::milliseconds(c.stop_ms));
        limiter.stop();
        stop_returned = ++step;
        tokens_after_stop = limiter.available();
      }));
      for (auto& t : threads) t->join();
      if (limiter.available() != tokens_after_stop) {
        BUBBLE_FAIL("the limiter held " + std::to_string(tokens_after_stop) +
                    " tokens when stop() returned and " + std::to_string(limiter.available()) +
                    " at the end: a token was spent or added after stop");
      }
    }
    if (pool.shutdown()) BUBBLE_FAIL("the pool's shutdown did not return {}");
    int accepted = 0;
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t i = 0; i < c.submitters[s].size(); ++i) {
        const std::error_code ec = results[s][i];
        const std::string call = "call " + std::to_string(i) + " of submitter " +
                                 std::to_string(s) + " (" +
                                 (c.submitters[s][i].try_submit ? "try_submit" : "submit") + ")";
        if (started[s][i] > stop_returned && ec != errc::limiter_stopped) {
          BUBBLE_FAIL(call + " started after stop() had returned and returned '" +
                      (ec ? ec.message() : std::string("accepted")) + "', not limiter_stopped");
        }
        if (ec && ec != errc::limiter_stopped && ec != errc::rate_limited) {
          BUBBLE_FAIL(call + " returned '" + ec.message() + "'");
        }
        if (ec == errc::rate_limited && !c.submitters[s][i].try_submit) {
          BUBBLE_FAIL(call + " returned rate_limited: submit waits for a token instead");
        }
        if (ec && runs[s][i] != 0) BUBBLE_FAIL(call + " was refused but its job ran");
        if (!ec && runs[s][i] != 1) {
          BUBBLE_FAIL(call + " was accepted and its job ran " + std::to_string(runs[s][i]) +
                      " times");
        }
        if (!ec) ++accepted;
      }
    }
    if (c.interval_ms == 0 && accepted != c.n - tokens_after_stop) {
      BUBBLE_FAIL(std::to_string(accepted) + " calls were accepted, but the bucket of " +
                  std::to_string(c.n) + " (never refilled) held " +
                  std::to_string(tokens_after_stop) +
                  " tokens after stop: every accepted call "
                  "spends one token, before stop");
    }
  });
}

}  // namespace bubble::scenarios
