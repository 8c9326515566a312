#pragma once

#include <atomic>
#include <cstdint>

#include <bubble/detail/not_instrumented.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/runtime.hpp>

namespace bubble::detail {

// SelectClaim is what the waiters of one blocked bubble::select share: the select queues one
// Waiter per channel case, each on its own channel's queue, and parks on a separate Waiter of its
// own (`wake`). Exactly one case may complete. A waker that dequeues a select's waiter first
// claims the select (claim_waiter): the first claim wins and completes that case, as for a plain
// waiter, then wakes `wake`; a waker whose claim fails drops that waiter (it was already unlinked
// by the dequeue) and looks at the next one. A context case claims from its Context::Callback.
//
// A queued Waiter belongs to a select when its `word` holds the address of the select's claim
// (0 for every other waiter). The claim lives in the select's frame, which outlives every queued
// waiter: the select unlinks its remaining waiters, under each channel's lock, before returning.
struct SelectClaim {
  std::atomic<bool> claimed{false};
  // The waiter whose case won (written by the winner right after its claim, read by the select
  // once it has been woken).
  Waiter* winner = nullptr;
  // The waiter the select parks on.
  Waiter* wake = nullptr;
};

inline SelectClaim* select_claim_of(const Waiter& w) noexcept {
  return reinterpret_cast<SelectClaim*>(static_cast<std::uintptr_t>(w.word));
}

inline void mark_select_waiter(Waiter& w, SelectClaim& claim) noexcept {
  w.word = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&claim));
}

// Claims the select that queued `w` for `w`'s case, if `w` is a select's waiter: true if the
// claim succeeded (the caller must complete the case and wake wake_target(w)), false if another
// case of that select won first (the caller must leave `w` alone). True for a plain waiter.
BUBBLE_NOT_INSTRUMENTED inline bool claim_waiter(Waiter& w) noexcept {
  SelectClaim* const claim = select_claim_of(w);
  if (claim == nullptr) return true;
  if (claim->claimed.exchange(true, std::memory_order_acq_rel)) return false;
  claim->winner = &w;
  return true;
}

// True if `w` can still be completed: a plain waiter, or a select's waiter whose select has not
// been claimed (a snapshot, exact under the primitive's lock unless another channel's waker
// claims the select meanwhile).
BUBBLE_NOT_INSTRUMENTED inline bool claimable(const Waiter& w) noexcept {
  const SelectClaim* const claim = select_claim_of(w);
  return claim == nullptr || !claim->claimed.load(std::memory_order_acquire);
}

// The waiter to unpark once `w`'s case is complete: `w` itself, or the waiter its select parks on.
inline Waiter& wake_target(Waiter& w) noexcept {
  SelectClaim* const claim = select_claim_of(w);
  return claim == nullptr ? w : *claim->wake;
}

// Removes and returns the first waiter of `q` that can be completed, claiming it if it belongs
// to a select; waiters of selects already claimed by another case are removed and skipped.
// nullptr when none is left.
inline Waiter* pop_claimed(WaitQueue& q) noexcept {
  while (Waiter* w = q.pop_front()) {
    if (w->word == 0 || claim_waiter(*w)) return w;
  }
  return nullptr;
}

// True if `q` holds a waiter that pop_claimed would return (without changing anything).
inline bool has_claimable(const WaitQueue& q) noexcept {
  for (const Waiter& w : q) {
    if (claimable(w)) return true;
  }
  return false;
}

}  // namespace bubble::detail
