#include <bubble/scenarios/limiter_exhibits.hpp>
#include <bubble/scenarios/property.hpp>

#include <bubble/gen/schedule.hpp>

#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "limiter_booth_property.hpp"
#include "limiter_exhibit_variants.hpp"
#include "limiter_rate_run.hpp"
#include "limiter_rate_workload.hpp"

namespace bubble::scenarios {
namespace {

int size_of(const RateWorkload& w) {
  return w.calls() + static_cast<int>(w.limiters.size()) +
         static_cast<int>(bubble::gen::preemptions(w.schedule));
}

int size_of(const BoothWorkload& w) {
  int takes = 0;
  for (const auto& t : w.pauses_ms) takes += static_cast<int>(t.size());
  return takes + static_cast<int>(bubble::gen::preemptions(w.schedule));
}

template <class W>
std::string shown(const W& w) {
  std::ostringstream os;
  showValue(w, os);
  return os.str();
}

// Runs `property`'s pieces as a RapidCheck property through check_property: draws a workload
// from `gen`, runs it with `run` and checks it with `check`, remembering the first failing case
// and the last one (RapidCheck's shrinking ends on the last failing case it tried).
template <class W, class Obs, class Run, class Check>
ExhibitHunt hunt(const std::string& name, rc::Gen<W> gen, Run run, Check check, std::uint64_t seed,
                 int max_cases) {
  if (max_cases < 1) {
    throw std::invalid_argument("bubble::scenarios::hunt_exhibit: max_cases must be >= 1, got " +
                                std::to_string(max_cases));
  }
  struct State {
    int calls = 0;
    int cases_to_failure = 0;
    std::optional<W> first;
    std::optional<W> last;
  };
  auto state = std::make_shared<State>();
  SuiteOptions options;
  options.cases = max_cases;
  options.seed = seed;
  SuiteResult result;
  std::ostringstream log;
  check_property("limiter-exhibits", name, options, result, log, [=] {
    const W w = testing::draw(gen);
    ++state->calls;
    try {
      Obs obs;
      (void)run(w, Options{}, obs);
      check(w, obs);
    } catch (...) {
      if (!state->first) {
        state->first = w;
        state->cases_to_failure = state->calls;
      }
      state->last = w;
      throw;
    }
  });
  ExhibitHunt out;
  out.found = result.properties_failed > 0 && state->first.has_value();
  out.report = log.str();
  if (!out.found) return out;
  out.cases_to_failure = state->cases_to_failure;
  out.first_size = size_of(*state->first);
  out.shrunk_size = size_of(*state->last);
  out.first_counterexample = shown(*state->first);
  out.shrunk_counterexample = shown(*state->last);
  const W shrunk = *state->last;
  out.replay = [shrunk, run] {
    Options options;
    options.trace = true;
    Obs obs;
    return run(shrunk, options, obs).trace_text();
  };
  return out;
}

}  // namespace

const char* to_string(LimiterExhibit exhibit) noexcept {
  switch (exhibit) {
    case LimiterExhibit::ticker_booth:
      return "ticker_booth";
    case LimiterExhibit::refund_into_next_interval:
      return "refund_into_next_interval";
    case LimiterExhibit::forgotten_refund:
      return "forgotten_refund";
  }
  return "unknown";
}

ExhibitHunt hunt_exhibit(LimiterExhibit exhibit, std::uint64_t seed, int max_cases) {
  switch (exhibit) {
    case LimiterExhibit::ticker_booth:
      return hunt<BoothWorkload, BoothObservations>(
          to_string(exhibit), booth_workload(),
          [](const BoothWorkload& w, Options o, BoothObservations& obs) {
            return run_booth_workload<TickerBooth>(w, std::move(o), obs);
          },
          [](const BoothWorkload& w, const BoothObservations& obs) {
            check_booth_observations(w, obs);
          },
          seed, max_cases);
    case LimiterExhibit::refund_into_next_interval:
      return hunt<RateWorkload, RateObservations>(
          to_string(exhibit), backpressure_workload(),
          [](const RateWorkload& w, Options o, RateObservations& obs) {
            return run_rate_workload<RefundVariantLimiter<RefundRule::any_interval>>(
                w, std::move(o), obs);
          },
          [](const RateWorkload& w, const RateObservations& obs) {
            check_rate_observations(w, obs, /*exact=*/false);
          },
          seed, max_cases);
    case LimiterExhibit::forgotten_refund:
      return hunt<RateWorkload, RateObservations>(
          to_string(exhibit), backlog_workload(),
          [](const RateWorkload& w, Options o, RateObservations& obs) {
            return run_rate_workload<RefundVariantLimiter<RefundRule::none>>(w, std::move(o), obs);
          },
          [](const RateWorkload& w, const RateObservations& obs) {
            check_rate_observations(w, obs, /*exact=*/true);
          },
          seed, max_cases);
  }
  throw std::invalid_argument("bubble::scenarios::hunt_exhibit: unknown exhibit");
}

}  // namespace bubble::scenarios
