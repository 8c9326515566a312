#pragma once

// The TicketBooth property of the limiter suite, a function of the booth implementation (the
// library's TicketBooth, or the Ticker-based exhibit). Private to the scenarios library.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/schedule.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <rapidcheck.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <system_error>
#include <vector>

#include "limiter_gen.hpp"

namespace bubble::scenarios {

// A booth of n tickets per window, taken by several takers: taker i sleeps pauses[i][j], then
// takes a ticket, for every j. The booth stops at stop_at_ms (-1: at the end).
struct BoothWorkload {
  int window_ms = 100;
  int n = 1;
  std::vector<std::vector<int>> pauses_ms;
  int stop_at_ms = -1;
  Schedule schedule;
};

void showValue(const BoothWorkload& w, std::ostream& os);
rc::Gen<BoothWorkload> booth_workload();

// One take: when it was called and returned (since the start), and its result.
struct TakeRecord {
  int taker = 0;
  Duration called{};
  Duration returned{};
  std::error_code result{};
  bool finished = false;
};

struct BoothObservations {
  Duration interval{};
  std::vector<TakeRecord> takes;
  std::optional<Duration> stopped_at;
};

// The conditions, with a message naming the takes involved: the booth hands out the first ticket
// at once and ticket i + 1 at exactly max(t_i + interval, the earliest call among the takes
// still unserved at t_i) — so never two within an interval, and never later than needed; takers
// are served first come, first served; a take that returns limiter_stopped returns at
// max(its call, the stop instant), and every take made after the stop returns limiter_stopped.
void check_booth_observations(const BoothWorkload& w, const BoothObservations& obs);

// Runs `w` in a bubble (through testing::run_property). Booth is constructible as
// Booth(Duration window, int n, Runtime&) and has TicketBooth's take(ctx), stop() and interval().
template <class Booth>
RunResult run_booth_workload(const BoothWorkload& w, Options options, BoothObservations& obs) {
  using std::chrono::milliseconds;
  options.strategy = w.schedule.to_strategy();
  options.max_steps = kCaseSteps;
  options.max_virtual_time = kCaseVirtualTime;
  obs = BoothObservations{};
  return testing::run_property(options, [&](Runtime& rt) {
    const TimePoint start = rt.now();
    Booth booth(milliseconds(w.window_ms), w.n, rt);
    obs.interval = booth.interval();
    std::vector<std::vector<TakeRecord>> records(w.pauses_ms.size());
    {
      std::vector<Thread> threads;
      if (w.stop_at_ms >= 0) {
        threads.emplace_back(
            "stopper",
            [&] {
              rt.sleep_until(start + milliseconds(w.stop_at_ms));
              obs.stopped_at = rt.now() - start;
              booth.stop();
            },
            rt);
      }
      for (std::size_t i = 0; i < w.pauses_ms.size(); ++i) {
        records[i].resize(w.pauses_ms[i].size());
        threads.emplace_back(
            "taker",
            [&, i] {
              for (std::size_t j = 0; j < w.pauses_ms[i].size(); ++j) {
                TakeRecord& r = records[i][j];
                r.taker = static_cast<int>(i);
                rt.sleep_for(milliseconds(w.pauses_ms[i][j]));
                r.called = rt.now() - start;
                r.result = booth.take(Context::background());
                r.returned = rt.now() - start;
                r.finished = true;
              }
            },
            rt);
      }
    }
    booth.stop();
    for (auto& list : records) {
      for (TakeRecord& r : list) obs.takes.push_back(r);
    }
  });
}

// Property: a TicketBooth with several takers hands out tickets exactly one interval apart after
// each hand-off (or as soon as a taker comes, if none was waiting), first come first served, and
// stop() wakes its waiting takers at that very instant. See check_booth_observations.
template <class Booth>
void ticket_booth_spaces_tickets_exactly() {
  const BoothWorkload w = testing::draw(booth_workload());
  BoothObservations obs;
  (void)run_booth_workload<Booth>(w, {}, obs);
  check_booth_observations(w, obs);
}

}  // namespace bubble::scenarios
