#pragma once

// Small generators shared by the limiter suite's workloads. Private to the scenarios library.
#include <rapidcheck.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace bubble::scenarios {

// The virtual-time budget of one case: every workload ends within a few seconds of virtual time,
// so a run still going after a minute is stuck (a submit that is never woken while another
// limiter's ticker keeps time moving) and fails at once instead of burning the step budget.
inline constexpr std::chrono::seconds kCaseVirtualTime{60};
// The step budget of one case, for the same reason: a case takes well under 100 000 scheduling
// steps, so a thread that spins without letting time move (a wait that returns at once, forever)
// fails after a million instead of the default hundred million.
inline constexpr std::uint64_t kCaseSteps = 1'000'000;

// A multiple of `step` ms in [0, max_ms]: a coarse grid of instants, so that calls, deadlines,
// stops and interval boundaries often coincide.
inline rc::Gen<int> grid_ms(int max_ms, int step) {
  return rc::gen::map(rc::gen::inRange(0, max_ms / step + 1), [step](int k) { return k * step; });
}

// -1 (never) with probability 1 - percent / 100, otherwise a value of `gen`.
inline rc::Gen<int> sometimes(int percent, rc::Gen<int> gen) {
  return rc::gen::weightedOneOf<int>({{static_cast<std::size_t>(100 - percent), rc::gen::just(-1)},
                                      {static_cast<std::size_t>(percent), std::move(gen)}});
}

// A non-empty list of up to `max` values of `gen` (at RapidCheck's largest size); shrinks by
// removing any element.
template <class T>
rc::Gen<std::vector<T>> list_of(double max, rc::Gen<T> gen) {
  // Scale the size for the length only: the elements are drawn at the original size.
  const double factor = max / 100.0;
  return rc::gen::scale(factor, rc::gen::nonEmpty(rc::gen::container<std::vector<T>>(
                                    rc::gen::scale(1.0 / factor, std::move(gen)))));
}

}  // namespace bubble::scenarios
