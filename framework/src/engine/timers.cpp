// The bubble's timers: park deadlines and Runtime::schedule_at callbacks, on virtual time.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/bubble.hpp"

namespace bubble::engine {
namespace {

// The timer storage the calling OS thread keeps between runs (see Bubble::borrow_timer_storage):
// all empty; taken away while a run has it.
struct KeptTimerStorage {
  TimerHeap heap;
  std::vector<TimerSlot> slots;
  std::vector<std::uint32_t> free_slots;
  std::vector<TimerEntry> due;
};
thread_local KeptTimerStorage tl_kept_timers;

// Below this many slots the storage is kept whatever the run used.
constexpr std::size_t kKeptSlotsAlways = 1024;

}  // namespace

void Bubble::borrow_timer_storage() noexcept {
  KeptTimerStorage& kept = tl_kept_timers;
  heap_.swap(kept.heap);
  slots_.swap(kept.slots);
  free_slots_.swap(kept.free_slots);
  due_.swap(kept.due);
}

void Bubble::keep_timer_storage() noexcept {
  // The slots ever made are the most timers this run had pending at once: every other vector
  // held at most that many.
  const std::size_t used = std::max(timer_slots_used_, slots_.size());
  heap_.clear();
  slots_.clear();
  free_slots_.clear();
  due_.clear();
  KeptTimerStorage& kept = tl_kept_timers;
  if (slots_.capacity() > kKeptSlotsAlways && used < slots_.capacity() / 4) {
    // Returned to the system: the next run grows what it needs.
    kept = KeptTimerStorage{};
    return;
  }
  // A storage kept by a run nested in this one is freed with this run's members.
  heap_.swap(kept.heap);
  slots_.swap(kept.slots);
  free_slots_.swap(kept.free_slots);
  due_.swap(kept.due);
}

std::size_t Bubble::kept_timer_slots() noexcept {
  return tl_kept_timers.slots.capacity();
}

TimerId Bubble::add_timer(TimePoint deadline, BThread* thread, std::function<void()> callback) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (slots_.size() > TimerEntry::kSlotMask) {
      throw std::length_error(
          "bubble::Runtime::schedule_at: more than 16777215 pending timers in " + name_);
    }
    // free_slot() (called by cancel_timer and unpark, which are noexcept) must never allocate:
    // keep room in the free list for every slot.
    if (free_slots_.capacity() < slots_.size() + 1) {
      free_slots_.reserve(std::max<std::size_t>(16, 2 * free_slots_.capacity()));
    }
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  TimerSlot& s = slots_[slot];
  s.active = true;
  s.seq = ++timer_seq_;
  s.thread = thread;
  s.callback = std::move(callback);
  const TimerEntry e{deadline, (s.seq << TimerEntry::kSlotBits) | slot};
  heap_.push(e);
  return e.key;
}

// Never allocates: add_timer keeps room in free_slots_ for every slot.
void Bubble::free_slot(std::uint32_t slot) noexcept {
  TimerSlot& s = slots_[slot];
  s.active = false;
  s.thread = nullptr;
  s.seq = 0;
  free_slots_.push_back(slot);
}

TimerId Bubble::schedule_at(TimePoint deadline, std::function<void()> callback) {
  check_thread("schedule_at");
  if (!callback) throw std::invalid_argument("bubble::Runtime::schedule_at: empty callback");
  const TimerId id = add_timer(deadline, nullptr, std::move(callback));
  if (races_) [[unlikely]]
    races_->timer_scheduled(race_thread(), id);  // The callback inherits the caller's clock.
  return id;
}

bool Bubble::cancel_timer(TimerId id) noexcept {
  if (tl_bubble != this) [[unlikely]]
    foreign_noexcept("cancel_timer");
  const TimerEntry probe{TimePoint{}, id};
  const std::uint32_t slot = probe.slot();
  if (id == 0 || slot >= slots_.size()) return false;
  TimerSlot& s = slots_[slot];
  if (!s.active || s.seq != probe.seq()) return false;
  std::function<void()> callback = std::move(s.callback);
  free_slot(slot);
  if (races_) [[unlikely]]
    races_->timer_cancelled(id);
  // The heap entry stays until it reaches the top (lazy deletion). Destroy the callback last:
  // its destructor may call back into the runtime.
  callback = nullptr;
  return true;
}

bool Bubble::pop_stale() noexcept {
  if (heap_.empty()) return false;
  const TimerEntry& top = heap_.top();
  const TimerSlot& s = slots_[top.slot()];
  if (s.active && s.seq == top.seq()) return false;
  heap_.pop();
  return true;
}

void Bubble::fire_due_timers() {
  // Every timer due at or before now fires before any thread runs. Under fifo they fire in
  // (deadline, creation) order; other strategies pick the order (recorded like any decision).
  while (timer_due() && !failed_) {
    due_.clear();
    while (!heap_.empty() && heap_.top().deadline <= now_) {
      const TimerEntry e = heap_.top();
      heap_.pop();
      const TimerSlot& s = slots_[e.slot()];
      if (s.active && s.seq == e.seq()) due_.push_back(e);
    }
    std::size_t begin = 0;
    while (begin < due_.size() && !failed_) {
      const std::size_t n = due_.size() - begin;
      std::uint32_t idx = 0;
      if (n > 1 && !unwinding_) {
        idx = scheduler_->pick_other(n);
        picks_.record(idx);
      }
      TimerEntry e;
      if (idx == 0) {
        e = due_[begin++];
      } else {
        e = due_[begin + idx];
        due_.erase(due_.begin() + static_cast<std::ptrdiff_t>(begin + idx));
      }
      fire(e);
    }
  }
}

void Bubble::fire(const TimerEntry& e) {
  TimerSlot& s = slots_[e.slot()];
  if (!s.active || s.seq != e.seq()) return;  // Cancelled by an earlier callback.
  ++timers_fired_;
  step(nullptr);
  last_progress_ = steps_.load(std::memory_order_relaxed);  // Time moved: waits may end.
  if (s.thread != nullptr) {
    BThread* t = s.thread;
    free_slot(e.slot());
    t->park_timer = 0;
    if (t->state == ThreadState::blocked) {
      // What it waits on lives in its own stack frame: read only when tracing, so that firing a
      // deadline touches the thread's record and not its stack (cold in a big bubble; the stack
      // is loaded ahead when the thread is about to run).
      if (tracing_) [[unlikely]] {
        trace_event(Trace::EventKind::timeout, t->id, t->what->kind, t->what->object_id,
                    t->what->where);
      }
      make_runnable(t);
    }
    return;
  }
  std::function<void()> callback = std::move(s.callback);
  free_slot(e.slot());
  if (races_) [[unlikely]]
    races_->timer_fired(e.key);
  trace(Trace::EventKind::timer, 0, {}, e.seq(), {});
  in_timer_callback_ = true;
  try {
    callback();
    callback = nullptr;
  } catch (...) {
    fail_with_exception(nullptr, std::current_exception());
  }
  in_timer_callback_ = false;
}

}  // namespace bubble::engine
