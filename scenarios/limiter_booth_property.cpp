#include "limiter_booth_property.hpp"

#include <bubble/errc.hpp>
#include <bubble/testing/case.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include "limiter_gen.hpp"

namespace bubble::scenarios {
namespace {

std::string describe(const TakeRecord& r) {
  return "taker " + std::to_string(r.taker) + " (called " + format_duration(r.called) +
         ", returned " + format_duration(r.returned) + ": " +
         (r.result ? r.result.message() : std::string("ticket")) + ")";
}

}  // namespace

void showValue(const BoothWorkload& w, std::ostream& os) {
  os << "BoothWorkload{window=" << w.window_ms << "ms, n=" << w.n << ", stop_at="
     << (w.stop_at_ms < 0 ? std::string("end") : std::to_string(w.stop_at_ms) + "ms")
     << ", schedule=";
  bubble::showValue(w.schedule, os);
  for (std::size_t i = 0; i < w.pauses_ms.size(); ++i) {
    os << ",\n  taker " << i << " pauses=[";
    for (std::size_t j = 0; j < w.pauses_ms[i].size(); ++j) {
      os << (j == 0 ? "" : ", ") << w.pauses_ms[i][j] << "ms";
    }
    os << "]";
  }
  os << "}";
}

rc::Gen<BoothWorkload> booth_workload() {
  return rc::gen::resize(100, rc::gen::exec([] {
                           BoothWorkload w;
                           w.n = *rc::gen::inRange(1, 6);
                           w.window_ms = *rc::gen::element(10, 25, 50, 100, 70);
                           w.pauses_ms = *list_of(4, list_of(6, grid_ms(60, 5)));
                           w.stop_at_ms = *sometimes(25, grid_ms(300, 5));
                           w.schedule = *bubble::gen::schedule();
                           return w;
                         }));
}

void check_booth_observations(const BoothWorkload& w, const BoothObservations& obs) {
  std::vector<const TakeRecord*> served;
  for (const TakeRecord& r : obs.takes) {
    if (!r.finished) BUBBLE_FAIL("take never returned: " + describe(r));
    if (!r.result) {
      served.push_back(&r);
    } else if (r.result != errc::limiter_stopped) {
      BUBBLE_FAIL("undocumented result: " + describe(r));
    } else if (!obs.stopped_at) {
      BUBBLE_FAIL("the booth was never stopped during the run: " + describe(r));
    } else if (r.returned != std::max(r.called, *obs.stopped_at)) {
      BUBBLE_FAIL("stopped at " + format_duration(*obs.stopped_at) + ", but " + describe(r));
    }
    if (obs.stopped_at && r.called > *obs.stopped_at && r.result != errc::limiter_stopped) {
      BUBBLE_FAIL("stopped at " + format_duration(*obs.stopped_at) + ", but later " + describe(r));
    }
  }
  std::sort(served.begin(), served.end(),
            [](const TakeRecord* a, const TakeRecord* b) { return a->returned < b->returned; });
  for (std::size_t i = 0; i < served.size(); ++i) {
    // The earliest call among the takes not served before this ticket.
    Duration earliest = Duration::max();
    for (std::size_t j = i; j < served.size(); ++j)
      earliest = std::min(earliest, served[j]->called);
    const Duration expected =
        i == 0 ? earliest : std::max(served[i - 1]->returned + obs.interval, earliest);
    if (served[i]->returned != expected) {
      BUBBLE_FAIL("ticket " + std::to_string(i) + " (interval " + format_duration(obs.interval) +
                  ") came at " + format_duration(served[i]->returned) + ", expected " +
                  format_duration(expected) + ": " + describe(*served[i]) +
                  (i == 0 ? std::string() : "; previous: " + describe(*served[i - 1])));
    }
    if (served[i]->called != earliest) {
      BUBBLE_FAIL("ticket " + std::to_string(i) + " went to " + describe(*served[i]) +
                  ", not to the earliest waiting taker (called " + format_duration(earliest) + ")");
    }
  }
  (void)w;
}

}  // namespace bubble::scenarios
