#pragma once

// The shrink candidates of a schedule's picks, shared by bubble::shrink_schedule and the
// RapidCheck schedule generator (bubble::gen::schedule).

#include <cstdint>
#include <vector>

namespace bubble::detail {

using Picks = std::vector<std::uint32_t>;

// `picks` without its trailing zeros (a zero is what a choices strategy picks once its picks run
// out, so both replay the same run).
Picks trimmed(Picks picks);

// Candidates with fewer preemptions that a pick-by-pick search cannot reach, because removing a
// preemption changes which decisions come later: for each nonzero pick i, (a) the schedule that
// keeps only pick i (if there are others), and (b) the schedule without pick i in which the picks
// after it move one or two decisions later. Each candidate is trimmed.
std::vector<Picks> preemption_candidates(const Picks& picks);

}  // namespace bubble::detail
