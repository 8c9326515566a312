#include <bubble/cond_var.hpp>

#include <atomic>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "primitives/parking.hpp"

namespace bubble {
namespace {

// Waiter::status values of a CondVar waiter.
constexpr int kWaiting = 0;
constexpr int kNotified = 1;
constexpr int kTimedOut = 2;
constexpr int kEnded = 3;  // The context ended.

// Counts the calling thread in CondVar::in_wait_ for the whole of a wait, on every way out.
class InWait {
 public:
  explicit InWait(std::atomic<std::size_t>& n) noexcept : n_(n) {
    n_.fetch_add(1, std::memory_order_relaxed);
  }
  ~InWait() { n_.fetch_sub(1, std::memory_order_relaxed); }
  InWait(const InWait&) = delete;
  InWait& operator=(const InWait&) = delete;

 private:
  std::atomic<std::size_t>& n_;
};

}  // namespace

// Skipping a notify when in_wait_ reads zero loses no wake-up. A waiter counts itself (with the
// Mutex held) before it queues and releases the Mutex, and uncounts itself only after it has left
// the queue. A notifier whose change to the condition was made under the Mutex, after a waiter
// released it, reads in_wait_ after acquiring that Mutex, so it reads that waiter's count or a
// later value (relaxed is enough: the Mutex orders the two). The waiters it cannot see took the
// Mutex after the change and will test the condition before waiting.

CondVar::CondVar(Runtime& rt) noexcept
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id()) {}

CondVar::CondVar(std::string_view name, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)) {}

TimePoint CondVar::deadline_after(Duration timeout) const noexcept {
  return detail::deadline_after(*rt_, timeout);
}

int CondVar::wait_impl(std::unique_lock<Mutex>& lock, TimePoint deadline, const Context* ctx,
                       const char* kind, SourceLocation where) {
  detail::check_caller(binding_, rt_, "CondVar", id_, kind);
  if (rt_->controlled()) rt_->schedule_point({kind, id_, where});
  Mutex* const mutex = lock.mutex();
  if (mutex == nullptr || !lock.owns_lock()) {
    throw std::logic_error(std::string("bubble::CondVar: ") + kind +
                           " requires a std::unique_lock that owns its Mutex");
  }
  // The same check for the Mutex, which this wait unlocks and locks again.
  detail::check_caller(mutex->binding_, mutex->rt_, "Mutex", mutex->id_, kind);

  InWait counted(in_wait_);
  Waiter w;
  w.status = kWaiting;
  rt_->prepare(w);
  {
    std::lock_guard guard(spin_);
    queue_.push_back(w);
  }
  // Declared after `w`: deregistered (and finished, if it is running elsewhere) before `w` dies.
  detail::EndWaitOnDone on_end(*rt_, &spin_, queue_, w, kEnded);
  on_end.arm(ctx);
  try {
    // Queued before the mutex is released: a notify issued after this point finds us.
    mutex->unlock(where);
  } catch (...) {
    on_end.disarm();
    std::lock_guard guard(spin_);
    if (w.queued()) queue_.remove(w);
    throw;
  }

  // Takes the mutex back for the caller. A thread unwound while waiting for it (its holder is
  // blocked for good) does not hold it, so `lock` is disowned, or its destructor would unlock
  // another thread's mutex.
  auto relock = [&] {
    try {
      mutex->lock(where);
    } catch (...) {
      lock.release();
      throw;
    }
  };
  bool woken;
  try {
    woken = detail::park_queued(*rt_, spin_, queue_, w, deadline, {kind, id_, where});
  } catch (...) {
    // Unwinding (a bubble abandoning this thread): restore the caller's lock if we can, so that
    // `lock` tells the truth, and go on with the first exception either way.
    on_end.disarm();
    try {
      relock();
    } catch (...) {  // relock disowned `lock`; the first exception goes on.
    }
    throw;
  }
  on_end.disarm();
  relock();
  return woken ? w.status : kTimedOut;
}

void CondVar::wait(std::unique_lock<Mutex>& lock, SourceLocation where) {
  wait_impl(lock, kNoDeadline, nullptr, "CondVar::wait", where);
}

std::error_code CondVar::wait(std::unique_lock<Mutex>& lock, const Context& ctx,
                              SourceLocation where) {
  if (wait_impl(lock, kNoDeadline, &ctx, "CondVar::wait", where) == kEnded) {
    return detail::ended_error(ctx.err());
  }
  return {};
}

std::cv_status CondVar::wait_until(std::unique_lock<Mutex>& lock, TimePoint deadline,
                                   SourceLocation where) {
  return wait_impl(lock, deadline, nullptr, "CondVar::wait_until", where) == kTimedOut
             ? std::cv_status::timeout
             : std::cv_status::no_timeout;
}

std::cv_status CondVar::wait_for(std::unique_lock<Mutex>& lock, Duration timeout,
                                 SourceLocation where) {
  return wait_until(lock, deadline_after(timeout), where);
}

void CondVar::notify_one(SourceLocation where) {
  if (rt_->controlled()) rt_->schedule_point({"CondVar::notify_one", id_, where});
  if (in_wait_.load(std::memory_order_relaxed) == 0) return;
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  Waiter* w = queue_.pop_front();
  if (w == nullptr) return;
  w->status = kNotified;
  wake.add(*w);
}

void CondVar::notify_all(SourceLocation where) {
  if (rt_->controlled()) rt_->schedule_point({"CondVar::notify_all", id_, where});
  if (in_wait_.load(std::memory_order_relaxed) == 0) return;
  detail::WakeList wake(*rt_);
  std::lock_guard guard(spin_);
  while (Waiter* w = queue_.pop_front()) {
    w->status = kNotified;
    wake.add(*w);
  }
}

std::size_t CondVar::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
