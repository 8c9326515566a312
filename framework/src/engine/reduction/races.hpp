#pragma once

// The race analysis of dynamic partial-order reduction (Flanagan and Godefroid, "Dynamic
// partial-order reduction for model checking software", POPL 2005), with the extra backtracking
// point that keeps it complete under a preemption bound (Coons, Musuvathi and McKinley, "Bounded
// partial-order reduction", OOPSLA 2013).

#include <cstdint>
#include <vector>

#include <bubble/dependencies.hpp>
#include <bubble/schedule.hpp>

namespace bubble::engine {

// One thing the next runs must also try: at decision `decision` (an index in the run's
// decisions), candidate `candidate`, or every candidate when it is kEveryCandidate.
struct Backtrack {
  static constexpr std::uint32_t kEveryCandidate = ~std::uint32_t{0};
  std::uint32_t decision = 0;
  std::uint32_t candidate = 0;
};

// The backtracking points of one run: for every step i of thread p whose last dependent step j
// (of another thread, on the same object or on object 0) does not happen before p's state (the
// vector clocks of program order, dependent steps, spawns and barriers), p must also be tried at
// the decision that chose j's thread (every candidate, if p could not run there), and at the
// decision of the last context switch before j (where running p costs no extra preemption).
// Decisions among timers or select cases are not in `log.choices` and get no request: a search
// explores all of their candidates anyway.
std::vector<Backtrack> find_backtracks(const std::vector<Decision>& decisions,
                                       const RunDependencies& log);

}  // namespace bubble::engine
