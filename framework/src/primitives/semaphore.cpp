#include <bubble/semaphore.hpp>

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "primitives/parking.hpp"

namespace bubble {
namespace {

// Waiter::status values of a Semaphore waiter.
constexpr int kWaiting = 0;
constexpr int kAcquired = 1;  // A releaser handed a permit over.
constexpr int kTimedOut = 2;
constexpr int kEnded = 3;  // The context ended first.

}  // namespace

Semaphore::Semaphore(std::ptrdiff_t initial, Runtime& rt)
    : Semaphore(std::string_view(), initial, rt) {}

Semaphore::Semaphore(std::string_view name, std::ptrdiff_t initial, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)), count_(initial) {
  if (initial < 0) {
    throw std::invalid_argument("bubble::Semaphore: initial count must be >= 0, got " +
                                std::to_string(initial));
  }
}

int Semaphore::acquire_impl(TimePoint deadline, const Context* ctx, const char* kind,
                            SourceLocation where) {
  detail::check_caller(binding_, rt_, "Semaphore", id_, kind);
  if (rt_->controlled()) {
    rt_->schedule_point({kind, id_, where});
    rt_->sync_acquire(id_);
  }
  if (ctx != nullptr && ctx->done()) return kEnded;
  Waiter w;
  {
    std::lock_guard guard(spin_);
    if (count_ > 0) {  // Then nobody is queued (invariant).
      --count_;
      return kAcquired;
    }
    if (deadline <= rt_->now()) return kTimedOut;
    w.status = kWaiting;
    rt_->prepare(w);
    queue_.push_back(w);
  }
  detail::EndWaitOnDone on_end(*rt_, &spin_, queue_, w, kEnded);
  on_end.arm(ctx);
  const bool woken = detail::park_queued(*rt_, spin_, queue_, w, deadline, {kind, id_, where},
                                         [this](Waiter& granted) {
                                           if (granted.status == kAcquired) release(1);
                                         });
  return woken ? w.status : kTimedOut;
}

void Semaphore::acquire(SourceLocation where) {
  acquire_impl(kNoDeadline, nullptr, "Semaphore::acquire", where);
}

std::error_code Semaphore::acquire(const Context& ctx, SourceLocation where) {
  if (acquire_impl(kNoDeadline, &ctx, "Semaphore::acquire", where) == kEnded) {
    return detail::ended_error(ctx.err());
  }
  return {};
}

bool Semaphore::try_acquire(SourceLocation where) {
  if (rt_->controlled()) {
    rt_->schedule_point({.kind = "Semaphore::try_acquire",
                         .object_id = id_,
                         .where = where,
                         .progress = Progress::maybe});
    rt_->sync_acquire(id_);
  }
  std::lock_guard guard(spin_);
  if (count_ == 0) return false;
  --count_;
  return true;
}

bool Semaphore::try_acquire_until(TimePoint deadline, SourceLocation where) {
  return acquire_impl(deadline, nullptr, "Semaphore::try_acquire_until", where) == kAcquired;
}

bool Semaphore::try_acquire_for(Duration timeout, SourceLocation where) {
  return acquire_impl(detail::deadline_after(*rt_, timeout), nullptr, "Semaphore::try_acquire_for",
                      where) == kAcquired;
}

void Semaphore::release(std::ptrdiff_t n, SourceLocation where) {
  if (n < 0) {
    throw std::invalid_argument("bubble::Semaphore: release count must be >= 0, got " +
                                std::to_string(n));
  }
  if (rt_->controlled()) {
    rt_->schedule_point({"Semaphore::release", id_, where});
    rt_->sync_release(id_);
  }
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  // Waiters exist only while count_ == 0, so this checks the count the release would leave.
  const auto handed = static_cast<std::ptrdiff_t>(queue_.size()) < n
                          ? static_cast<std::ptrdiff_t>(queue_.size())
                          : n;
  if (n - handed > std::numeric_limits<std::ptrdiff_t>::max() - count_) {
    throw std::overflow_error("bubble::Semaphore: release(" + std::to_string(n) +
                              ") overflows the count " + std::to_string(count_));
  }
  for (std::ptrdiff_t i = 0; i < handed; ++i) {
    Waiter* w = queue_.pop_front();
    w->status = kAcquired;
    wake.add(*w);
  }
  count_ += n - handed;
}

std::ptrdiff_t Semaphore::available() const noexcept {
  std::lock_guard guard(spin_);
  return count_;
}

std::size_t Semaphore::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
