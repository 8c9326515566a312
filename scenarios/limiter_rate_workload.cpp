#include "limiter_rate_workload.hpp"

#include <bubble/errc.hpp>
#include <bubble/testing/case.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include "limiter_gen.hpp"

namespace bubble::scenarios {
namespace {

std::string ms(int value) {
  return std::to_string(value) + "ms";
}

std::string at(Duration d) {
  return format_duration(d);
}

rc::Gen<RateCall> call_gen(int limiters) {
  return rc::gen::exec([limiters] {
    RateCall call;
    call.gap_ms = *grid_ms(30, 5);
    call.limiter = *rc::gen::inRange(0, limiters);
    call.try_submit = *rc::gen::arbitrary<bool>();
    call.tenant = *rc::gen::element(0, 0, 1, 1, 2);
    call.work_ms = *grid_ms(60, 5);
    call.deadline_ms = *sometimes(15, grid_ms(60, 5));
    return call;
  });
}

RateWorkload draw_workload(bool backpressure) {
  RateWorkload w;
  w.workers = *rc::gen::inRange(1, 3);
  w.tenant_cap = *rc::gen::element(0, 1, 1, 2);
  w.running_cap = *rc::gen::element(0, 1);
  w.limiters = *rc::gen::container<std::vector<RateLimiterSpec>>(
      *rc::gen::inRange<std::size_t>(1, 3), rc::gen::exec([] {
        RateLimiterSpec l;
        l.n = *rc::gen::inRange(1, 4);
        l.interval_ms = *rc::gen::element(10, 10, 20, 30);
        l.stop_at_ms = *sometimes(20, grid_ms(150, 5));
        return l;
      }));
  const int limiters = static_cast<int>(w.limiters.size());
  w.submitters = *list_of(8, list_of(10, call_gen(limiters)));
  w.shutdown_at_ms = *sometimes(25, grid_ms(200, 5));
  w.queue_capacity = backpressure ? *rc::gen::inRange(1, 3) : std::max(1, w.calls());
  w.schedule = *bubble::gen::schedule();
  return w;
}

bool is_one_of(std::error_code ec, std::initializer_list<errc> allowed) {
  for (const errc e : allowed) {
    if (ec == e) return true;
  }
  return false;
}

std::string describe(const CallRecord& r) {
  std::ostringstream os;
  os << "s" << r.submitter << "#" << r.index << " ("
     << (r.call.try_submit ? "try_submit" : "submit") << ", tenant " << r.call.tenant << ", called "
     << at(r.called) << ", returned " << at(r.returned) << ": "
     << (r.result ? r.result.message() : std::string("accepted")) << ")";
  return os.str();
}

void fail(const std::string& message) {
  BUBBLE_FAIL(message);
}

}  // namespace

int RateWorkload::calls() const {
  int total = 0;
  for (const auto& s : submitters) total += static_cast<int>(s.size());
  return total;
}

void showValue(const RateCall& c, std::ostream& os) {
  os << "RateCall{gap=" << ms(c.gap_ms) << ", limiter=" << c.limiter
     << ", api=" << (c.try_submit ? "try_submit" : "submit") << ", tenant=" << c.tenant
     << ", work=" << ms(c.work_ms)
     << ", deadline=" << (c.deadline_ms < 0 ? std::string("none") : ms(c.deadline_ms)) << "}";
}

void showValue(const RateLimiterSpec& l, std::ostream& os) {
  os << "RateLimiter{n=" << l.n << ", interval=" << ms(l.interval_ms)
     << ", stop_at=" << (l.stop_at_ms < 0 ? std::string("end") : ms(l.stop_at_ms)) << "}";
}

void showValue(const RateWorkload& w, std::ostream& os) {
  os << "RateWorkload{pool={workers=" << w.workers << ", queue_capacity=" << w.queue_capacity
     << ", max_queued_per_tenant=" << w.tenant_cap
     << "}, shutdown_at=" << (w.shutdown_at_ms < 0 ? std::string("end") : ms(w.shutdown_at_ms))
     << ", schedule=";
  bubble::showValue(w.schedule, os);
  os << ",\n  limiters=[";
  for (std::size_t i = 0; i < w.limiters.size(); ++i) {
    os << (i == 0 ? "" : ", ");
    showValue(w.limiters[i], os);
  }
  os << "]";
  for (std::size_t s = 0; s < w.submitters.size(); ++s) {
    os << ",\n  submitter " << s << "=[";
    for (std::size_t c = 0; c < w.submitters[s].size(); ++c) {
      os << (c == 0 ? "" : ", ");
      showValue(w.submitters[s][c], os);
    }
    os << "]";
  }
  os << "}";
}

// Every case is drawn at full size (small cases cost as much to run and find little); the
// counterexample still shrinks, towards fewer submitters, calls and preemptions, and smaller
// values.
rc::Gen<RateWorkload> backpressure_workload() {
  return rc::gen::resize(100, rc::gen::exec([] { return draw_workload(true); }));
}

rc::Gen<RateWorkload> backlog_workload() {
  return rc::gen::resize(100, rc::gen::exec([] { return draw_workload(false); }));
}

void check_rate_observations(const RateWorkload& w, const RateObservations& obs, bool exact) {
  // Every call ends, with a documented result, and its job runs as the result says.
  for (const CallRecord& r : obs.calls) {
    if (!r.finished) fail("call never returned: " + describe(r));
    const bool ok =
        r.call.try_submit
            ? (!r.result || is_one_of(r.result, {errc::limiter_stopped, errc::rate_limited,
                                                 errc::full, errc::closed, errc::tenant_limit}))
            : (!r.result || is_one_of(r.result, {errc::limiter_stopped, errc::closed,
                                                 errc::tenant_limit, errc::deadline_exceeded}));
    if (!ok) fail("undocumented result: " + describe(r));
    if (!r.result) {
      if (r.outcomes != 1) {
        fail("accepted job reported " + std::to_string(r.outcomes) +
             " outcomes, not 1: " + describe(r));
      }
      if (r.ran > 1) fail("accepted job ran " + std::to_string(r.ran) + " times: " + describe(r));
    } else if (r.ran != 0 || r.outcomes != 0) {
      fail("refused job ran (" + std::to_string(r.ran) + " times, " + std::to_string(r.outcomes) +
           " outcomes): " + describe(r));
    }
  }
  for (std::size_t l = 0; l < w.limiters.size(); ++l) {
    const RateLimiterSpec& spec = w.limiters[l];
    const Duration interval = std::chrono::milliseconds(spec.interval_ms);
    std::vector<const CallRecord*> mine;
    for (const CallRecord& r : obs.calls) {
      if (r.call.limiter == static_cast<int>(l)) mine.push_back(&r);
    }
    const std::string name = "limiter " + std::to_string(l) + " (n=" + std::to_string(spec.n) +
                             ", interval=" + ms(spec.interval_ms) + ")";
    // stop(): waiting submits are woken at that very instant; later calls are refused.
    if (const auto& stop = obs.stopped_at[l]) {
      for (const CallRecord* r : mine) {
        if (r->result == errc::limiter_stopped && r->returned != std::max(r->called, *stop)) {
          fail(name + " stopped at " + at(*stop) + ", but a call returned limiter_stopped at " +
               at(r->returned) + ": " + describe(*r));
        }
        if (r->called > *stop && r->result != errc::limiter_stopped) {
          fail(name + " stopped at " + at(*stop) +
               ", but a later call was not refused: " + describe(*r));
        }
      }
    } else {
      for (const CallRecord* r : mine) {
        if (r->result == errc::limiter_stopped) {
          fail(name + " was never stopped during the run: " + describe(*r));
        }
      }
    }
    // At most n per window, for every span of windows [a, b].
    std::vector<const CallRecord*> accepted;
    for (const CallRecord* r : mine) {
      if (!r->result) accepted.push_back(r);
    }
    std::set<std::int64_t> starts;
    std::set<std::int64_t> ends;
    for (const CallRecord* r : accepted) {
      starts.insert(r->called / interval);
      ends.insert(r->returned / interval);
    }
    for (const std::int64_t a : starts) {
      for (const std::int64_t b : ends) {
        if (b < a) continue;
        std::vector<const CallRecord*> inside;
        for (const CallRecord* r : accepted) {
          if (r->called / interval >= a && r->returned / interval <= b) inside.push_back(r);
        }
        const std::int64_t bound = spec.n * (b - a + 1);
        if (static_cast<std::int64_t>(inside.size()) > bound) {
          std::string message = name + " admitted " + std::to_string(inside.size()) +
                                " jobs within [" + at(a * interval) + ", " +
                                at((b + 1) * interval) + "), more than " + std::to_string(bound) +
                                ":";
          for (const CallRecord* r : inside) message += "\n    " + describe(*r);
          fail(message);
        }
      }
    }
    // The tokens left never exceed n minus the jobs the current window has admitted so far (a
    // call made in window k spends a token of window k): read at every call's return, so a
    // refund that lifts the bucket above what the window has left is seen at once.
    for (const CallRecord& snapshot : obs.calls) {
      const std::int64_t k = snapshot.returned / interval;
      int admitted = 0;
      for (const CallRecord* r : accepted) {
        if (r->called / interval == k && r->returned / interval == k &&
            r->return_seq <= snapshot.return_seq) {
          ++admitted;
        }
      }
      const int tokens = snapshot.available_after[l];
      if (admitted > 0 && tokens + admitted > spec.n) {
        std::string message = name + " had " + std::to_string(tokens) + " tokens at " +
                              at(snapshot.returned) + " (after " + describe(snapshot) +
                              ") although [" + at(k * interval) + ", " + at((k + 1) * interval) +
                              ") had already admitted " + std::to_string(admitted) + ":";
        for (const CallRecord* r : accepted) {
          if (r->called / interval == k && r->returned / interval == k &&
              r->return_seq <= snapshot.return_seq) {
            message += "\n    " + describe(*r);
          }
        }
        fail(message);
      }
    }
    if (!exact) continue;
    // Exactly n per window while a submit waits for a token at the window's end.
    std::set<std::int64_t> backlogged;
    for (const CallRecord* r : mine) {
      if (r->call.try_submit) continue;
      // Pending across the boundaries after its start window, up to its return.
      for (std::int64_t k = r->called / interval; (k + 1) * interval <= r->returned; ++k) {
        if ((k + 1) * interval > r->called) backlogged.insert(k);
      }
    }
    for (const std::int64_t k : backlogged) {
      int admitted = 0;
      for (const CallRecord* r : accepted) {
        if (r->returned / interval == k) ++admitted;
      }
      if (admitted != spec.n) {
        std::string message = name + " admitted " + std::to_string(admitted) + " jobs in [" +
                              at(k * interval) + ", " + at((k + 1) * interval) +
                              ") while a submit waited for a token at its end:";
        for (const CallRecord* r : mine) {
          if (r->called < (k + 1) * interval && r->returned >= k * interval) {
            message += "\n    " + describe(*r);
          }
        }
        fail(message);
      }
    }
  }
}

}  // namespace bubble::scenarios
