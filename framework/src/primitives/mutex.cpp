// bubble::Mutex: the slow paths. The algorithm is after Go's sync.Mutex (normal mode with
// barging and one woken waiter at a time; a starvation mode with a direct hand-off once a waiter
// has waited kStarvationThreshold), with the waiting done by the Runtime kernel's parking protocol:
// the queue and every change of the kQueued, kWoken and kStarving bits are guarded by spin_; a
// waker dequeues a waiter and sets its status under spin_, and unparks it once spin_ is released.
//
// Who may change state_ without spin_: the owner's fast unlock (kLocked -> kUnlocked, only when
// no other bit is set), and a locker's compare-and-swap that sets kLocked (only when kLocked and
// kStarving are clear). So while a thread holds kLocked, only holders of spin_ change state_.

#include <bubble/mutex.hpp>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>

#include <bubble/detail/cpu_relax.hpp>
#include <bubble/trace.hpp>

#include "primitives/parking.hpp"

namespace bubble {
namespace {

// Waiter::status values of a Mutex waiter.
constexpr int kWaiting = 0;
constexpr int kWokenToCompete = 1;  // Normal mode: woken; compete for the mutex again.
constexpr int kHandedOver = 2;      // Starvation mode: the unlocker made this waiter the owner.

// A woken waiter that loses the race after waiting this long gets the next unlock handed to it.
// Go uses 1 ms for goroutines; a hand-off to an OS thread costs a scheduling latency, which on a
// loaded machine is itself about a millisecond, so 1 ms made the mutex hand off nearly every time
// under contention (a convoy of hand-offs, each a context switch: mutex_bench's
// BM_BubbleMutex_Contended against BM_StdMutex_Contended); 10 ms keeps fairness bounded at a much
// lower cost.
constexpr Duration kStarvationThreshold = std::chrono::milliseconds(10);

// Spins (system runtime only) before queueing, in case the owner is about to unlock.
constexpr int kSpins = 32;

}  // namespace

Mutex::Mutex(Runtime& rt) noexcept
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id()) {}

Mutex::Mutex(std::string_view name, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)) {}

void Mutex::describe_wait(const void* self, WaitDetail& detail) {
  const auto* m = static_cast<const Mutex*>(self);
  detail.holder = m->owner_.load(std::memory_order_relaxed);
  detail.held_since = m->held_since_;
}

// unlock_slow frees the mutex (its store to state_) while it still holds spin_: a thread may then
// take the free mutex, unlock it and destroy it while unlock_slow is still releasing spin_. Taking
// spin_ here waits for that release (unlock_slow touches nothing of *this afterwards: it unparks
// with the lock released). The store cannot simply move out of the critical section, because
// kQueued, kWoken and kStarving change only under spin_.
Mutex::~Mutex() {
  std::lock_guard guard(spin_);
}

const void* Mutex::enter_controlled(const char* kind, SourceLocation where) {
  // A thread that locks and unlocks in a loop may be waiting for another (a spin-wait) or working:
  // the bubble does not see the critical section.
  rt_->schedule_point(
      {.kind = kind, .object_id = id_, .where = where, .progress = Progress::maybe});
  return rt_->current_thread_token();
}

TimePoint Mutex::lock_slow(SourceLocation where) {
  const bool controlled = rt_->controlled();
  bool awoke = false;     // We were woken by an unlock: we own the kWoken bit and must clear it.
  bool starving = false;  // We have waited longer than kStarvationThreshold.
  bool waited = false;
  TimePoint wait_start{};
  int spins = 0;
  for (;;) {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    if ((s & (kLocked | kStarving)) == 0) {
      // Free and not reserved for a waiter: take it (barging is allowed in normal mode).
      const std::uint32_t next = (s | kLocked) & ~(awoke ? kWoken : 0u);
      if (state_.compare_exchange_weak(s, next, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return waited ? wait_start : kDidNotWait;
      }
      continue;
    }
    if (!controlled && !awoke && (s & kStarving) == 0 && spins < kSpins) {
      ++spins;
      detail::cpu_relax();
      continue;
    }

    Waiter w;
    rt_->prepare(w);
    {
      std::lock_guard guard(spin_);
      s = state_.load(std::memory_order_relaxed);
      bool queued = false;
      while ((s & (kLocked | kStarving)) != 0) {
        std::uint32_t next = (s | kQueued) & ~(awoke ? kWoken : 0u);
        // Only a held mutex can enter starvation mode (the unlock then hands it to us).
        if (starving && (s & kLocked) != 0) next |= kStarving;
        if (state_.compare_exchange_weak(s, next, std::memory_order_relaxed,
                                         std::memory_order_relaxed)) {
          queued = true;
          break;
        }
      }
      if (!queued) continue;  // Freed meanwhile: compete again (still owning kWoken if awoke).
      awoke = false;
      // A waiter that already waited goes back to the front: it keeps its place in line.
      const bool front = waited;
      if (!waited) {
        waited = true;
        wait_start = rt_->now();
      }
      w.status = kWaiting;
      if (front) {
        queue_.push_front(w);
      } else {
        queue_.push_back(w);
      }
    }
    ParkResult result;
    try {
      result = rt_->park(w, kNoDeadline,
                         {.kind = "Mutex::lock",
                          .object_id = id_,
                          .where = where,
                          .object = this,
                          .describe = &Mutex::describe_wait});
    } catch (...) {
      // Unwinding (a bubble abandoning this thread): leave no trace in the mutex.
      bool own = false;
      {
        detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
        std::lock_guard guard(spin_);
        if (w.queued()) {
          queue_.remove(w);
          if (queue_.size() == 0)
            state_.fetch_and(~(kQueued | kStarving), std::memory_order_relaxed);
        } else if (w.status == kWokenToCompete) {
          // Give up our kWoken: if the mutex is free, wake the next waiter in our place.
          std::uint32_t cur = state_.load(std::memory_order_relaxed);
          Waiter* next_waiter;
          for (;;) {
            std::uint32_t next = cur & ~kWoken;
            next_waiter = nullptr;
            if ((cur & kLocked) == 0 && !queue_.empty()) {
              next_waiter = queue_.front();
              next |= kWoken;
              if (queue_.size() == 1) next &= ~kQueued;
            }
            if (state_.compare_exchange_weak(cur, next, std::memory_order_relaxed,
                                             std::memory_order_relaxed)) {
              break;
            }
          }
          if (next_waiter != nullptr) {
            queue_.remove(*next_waiter);
            next_waiter->status = kWokenToCompete;
            wake.add(*next_waiter);
          }
        } else {
          own = true;
        }
      }
      if (own) unlock_slow();
      throw;
    }
    (void)result;  // Never timed_out: no deadline.
    if (w.status == kHandedOver) return wait_start;
    awoke = true;
    spins = 0;
    if (!starving && rt_->now() - wait_start > kStarvationThreshold) starving = true;
  }
}

void Mutex::acquired_controlled(const char* kind, TimePoint waited_since, SourceLocation where) {
  rt_->sync_acquire(id_);
  const TimePoint now = rt_->now();
  held_since_ = now;  // For traces and deadlock reports (who holds it, since when).
  if (!detail::tl_tracing) return;
  const bool waited = waited_since != kDidNotWait;
  detail::trace_record(Trace::EventKind::acquire, kind, id_, where,
                       waited ? now - waited_since : Duration{}, waited);
}

void Mutex::unlock_controlled(SourceLocation where) {
  if (detail::tl_tracing) [[unlikely]] {
    // Contended: threads are queued, or one the last unlock woke has not taken the mutex yet.
    const bool waiting = (state_.load(std::memory_order_relaxed) & (kQueued | kWoken)) != 0;
    detail::trace_record(Trace::EventKind::release, "Mutex::unlock", id_, where,
                         rt_->now() - held_since_, waiting);
  }
  Runtime& rt = *rt_;
  const std::uint64_t id = id_;
  rt.sync_release(id);
  release();
  // A scheduling point after the release: a waiter the release woke (or any other thread) may
  // take the mutex before this thread locks it again. Without it, a thread that unlocks and
  // relocks runs straight on to its next lock call with the mutex free, and an interleaving in
  // which another thread gets the mutex between the two critical sections needs a switch there.
  // Another thread may destroy the mutex from here on: only the copies above are used.
  rt.schedule_point(
      {.kind = "Mutex::unlock", .object_id = id, .where = where, .progress = Progress::maybe});
}

void Mutex::unlock_slow() noexcept {
  // The woken waiter may take the mutex and destroy it as soon as it is unparked: unpark only
  // once the guard has released spin_, and touch nothing of *this after that.
  detail::WakeList wake(*rt_);
  std::lock_guard guard(spin_);
  std::uint32_t s = state_.load(std::memory_order_relaxed);
  if ((s & kStarving) != 0 && !queue_.empty()) {
    // Starvation mode: the mutex stays locked and becomes the first waiter's (the one that set
    // the mode, which went back to the front of the queue). One hand-off per starvation episode:
    // then back to normal mode, because a convoy of hand-offs (each a context switch) costs far
    // more than barging (mutex_bench's contended rows).
    Waiter* w = queue_.pop_front();
    std::uint32_t next = s & ~kStarving;
    if (queue_.size() == 0) next &= ~kQueued;
    state_.store(next, std::memory_order_relaxed);
    w->status = kHandedOver;
    wake.add(*w);
    return;
  }
  // Normal mode: free the mutex; wake the first waiter unless one is already on its way.
  std::uint32_t next = s & ~(kLocked | kStarving);
  Waiter* w = nullptr;
  if ((s & kWoken) == 0 && !queue_.empty()) {
    w = queue_.pop_front();
    next |= kWoken;
    if (queue_.size() == 0) next &= ~kQueued;
  }
  state_.store(next, std::memory_order_release);
  if (w != nullptr) {
    w->status = kWokenToCompete;
    wake.add(*w);
  }
}

void Mutex::throw_not_owner() const {
  const bool locked = (state_.load(std::memory_order_relaxed) & kLocked) != 0;
  throw std::logic_error(std::string("bubble::Mutex: unlock of mutex #") + std::to_string(id_) +
                         (locked ? " by a thread that does not hold it" : " that is not locked"));
}

std::size_t Mutex::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
