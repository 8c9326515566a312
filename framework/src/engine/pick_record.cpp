// PickRecord: the vector the OS thread keeps between runs, its growth and the recorded Schedule.

#include "engine/pick_record.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace bubble::engine {
namespace {

// The vector the calling OS thread keeps between runs: all zeros; empty while a run has it.
thread_local std::vector<std::uint32_t> tl_kept_picks;

}  // namespace

PickRecord::PickRecord() {
  picks_.swap(tl_kept_picks);
}

PickRecord::~PickRecord() {
  std::fill_n(picks_.begin(), end_, 0u);
  if (picks_.size() > kFirstPicks && end_ < picks_.size() / 4) {
    // Cut down to what this run needed (shrink_to_fit copies into a smaller vector; if that
    // allocation fails, the vector stays as it is).
    picks_.resize(std::max(kFirstPicks, 2 * end_));
    picks_.shrink_to_fit();
  }
  tl_kept_picks.swap(picks_);  // A vector kept by a run nested in this one is freed.
}

void PickRecord::record_slow(std::uint32_t idx) {
  // Grows the zero-filled vector (at least doubling it) to hold idx after the pending zeros.
  const std::uint64_t at = end_ + zeros_pending_;
  picks_.resize(std::max<std::uint64_t>({at + 1, 2 * picks_.size(), kFirstPicks}), 0);
  picks_[at] = idx;
  end_ = at + 1;
  zeros_pending_ = 0;
}

Schedule PickRecord::schedule() const {
  const auto first = picks_.begin();
  return Schedule{std::vector<std::uint32_t>(first, first + static_cast<std::ptrdiff_t>(end_)),
                  decisions_};
}

std::size_t PickRecord::kept_size() noexcept {
  return tl_kept_picks.size();
}

}  // namespace bubble::engine
