#include <bubble/gen/schedule.hpp>

#include <bubble/detail/schedule_shrink.hpp>
#include <bubble/shrink.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bubble::gen {
namespace {

using detail::Picks;
using detail::preemption_candidates;

bool no_trailing_zero(const Picks& p) {
  return p.empty() || p.back() != 0;
}

// The shrinks of a list of picks without trailing zeros, best first:
//   1. fewer preemptions (see preemption_candidates);
//   2. drop contiguous chunks of picks (largest first);
//   3. lower one pick to each smaller value (0 first).
// Candidates of 2 and 3 that end with a zero are left out: each equals a shorter candidate of 2
// (the same picks without the trailing zeros). Every candidate has fewer nonzero picks, or as
// many and fewer picks, or as many picks with one pick smaller and the others unchanged: the
// search always terminates, and towards few preemptions.
rc::Seq<Picks> shrink_picks(const Picks& picks) {
  return rc::seq::concat(
      rc::seq::fromContainer(preemption_candidates(picks)),
      rc::seq::filter(
          rc::seq::concat(
              rc::shrink::removeChunks(picks),
              rc::shrink::eachElement(
                  picks, [](std::uint32_t x) { return rc::seq::range<std::uint32_t>(0, x); })),
          no_trailing_zero));
}

class ScheduleGen {
 public:
  explicit ScheduleGen(ScheduleShape shape) : shape_(shape) {}

  rc::Shrinkable<Schedule> operator()(const rc::Random& random, int size) const {
    rc::Random r(random);
    const std::size_t size_now = static_cast<std::size_t>(std::max(0, size));
    // Lengths grow with RapidCheck's size and reach max_length at its nominal maximum.
    const std::size_t longest = std::min<std::size_t>(
        shape_.max_length,
        (shape_.max_length * size_now + rc::kNominalSize - 1) / rc::kNominalSize);
    const std::size_t length = static_cast<std::size_t>(r.next() % (longest + 1));
    Picks picks(length, 0);
    for (std::uint32_t& pick : picks) {
      const std::uint64_t draw = r.next();
      if (static_cast<int>(draw % 100) < shape_.preemption_percent) {
        pick = 1 + static_cast<std::uint32_t>((draw / 100) % shape_.max_pick);
      }
    }
    while (!picks.empty() && picks.back() == 0) picks.pop_back();
    return rc::shrinkable::map(rc::shrinkable::shrinkRecur(std::move(picks), &shrink_picks),
                               [](const Picks& p) {
                                 Schedule s;
                                 s.picks = p;
                                 s.decisions = p.size();
                                 return s;
                               });
  }

 private:
  ScheduleShape shape_;
};

}  // namespace

rc::Gen<Schedule> schedule(ScheduleShape shape) {
  if (shape.max_length == 0) {
    throw std::invalid_argument("bubble::gen::schedule: max_length must be >= 1, got 0");
  }
  if (shape.max_pick == 0) {
    throw std::invalid_argument("bubble::gen::schedule: max_pick must be >= 1, got 0");
  }
  if (shape.preemption_percent < 0 || shape.preemption_percent > 100) {
    throw std::invalid_argument(
        "bubble::gen::schedule: preemption_percent must be in [0, 100], got " +
        std::to_string(shape.preemption_percent));
  }
  return ScheduleGen(shape);
}

rc::Gen<Schedule> schedule() {
  return schedule(ScheduleShape{});
}

std::size_t preemptions(const Schedule& s) noexcept {
  return bubble::preemptions(s);
}

}  // namespace bubble::gen

namespace bubble {

void showValue(const Schedule& s, std::ostream& os) {
  const std::size_t n = gen::preemptions(s);
  os << s.to_strategy().to_string() << " (" << n << (n == 1 ? " preemption)" : " preemptions)");
}

}  // namespace bubble
