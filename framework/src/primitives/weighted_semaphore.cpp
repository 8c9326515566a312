#include <bubble/weighted_semaphore.hpp>

#include <optional>
#include <stdexcept>
#include <string>

#include "primitives/parking.hpp"

namespace bubble {
namespace {

// Waiter::status values of a WeightedSemaphore waiter.
constexpr int kWaiting = 0;
constexpr int kAcquired = 1;  // A releaser handed the units over.
constexpr int kEnded = 2;     // The context ended first.

}  // namespace

WeightedSemaphore::WeightedSemaphore(std::int64_t size, Runtime& rt)
    : WeightedSemaphore(std::string_view(), size, rt) {}

WeightedSemaphore::WeightedSemaphore(std::string_view name, std::int64_t size, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)), size_(size) {
  if (size < 0) {
    throw std::invalid_argument("bubble::WeightedSemaphore: size must be >= 0, got " +
                                std::to_string(size));
  }
}

void WeightedSemaphore::describe_wait(const void* self, WaitDetail& detail) {
  const auto* s = static_cast<const WeightedSemaphore*>(self);
  std::lock_guard guard(s->spin_);
  detail.state = std::to_string(s->size_ - s->cur_) + " of " + std::to_string(s->size_) +
                 " units free, " + std::to_string(s->queue_.size()) + " waiting";
}

void WeightedSemaphore::check_weight(const char* operation, std::int64_t n) const {
  if (n < 0) {
    throw std::invalid_argument(std::string("bubble::WeightedSemaphore::") + operation +
                                ": weight must be >= 0, got " + std::to_string(n));
  }
  if (n > size_) {
    throw std::invalid_argument(std::string("bubble::WeightedSemaphore::") + operation +
                                ": weight " + std::to_string(n) + " exceeds the size " +
                                std::to_string(size_) + " and could never be acquired");
  }
}

void WeightedSemaphore::grant_locked(detail::WakeList& wake) noexcept {
  while (Waiter* w = queue_.front()) {
    const auto n = static_cast<std::int64_t>(w->word);
    // The head does not fit: everyone waits behind it (no overtaking, see the header).
    if (size_ - cur_ < n) break;
    cur_ += n;
    queue_.remove(*w);
    w->status = kAcquired;
    wake.add(*w);
  }
}

void WeightedSemaphore::give_back(std::int64_t n) noexcept {
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  cur_ -= n;
  grant_locked(wake);
}

std::error_code WeightedSemaphore::acquire(const Context& ctx, std::int64_t n,
                                           SourceLocation where) {
  detail::check_caller(binding_, rt_, "WeightedSemaphore", id_, "WeightedSemaphore::acquire");
  check_weight("acquire", n);
  if (rt_->controlled()) {
    rt_->schedule_point({"WeightedSemaphore::acquire", id_, where});
    rt_->sync_acquire(id_);
  }
  // A context that ended before the call fails it, even if the units are free (Go does the same
  // since golang/go#63615).
  if (ctx.done()) return detail::ended_error(ctx.err());
  Waiter w;
  {
    std::lock_guard guard(spin_);
    if (size_ - cur_ >= n && queue_.empty()) {
      cur_ += n;
      return {};
    }
    w.word = static_cast<std::uint64_t>(n);
    w.status = kWaiting;
    rt_->prepare(w);
    queue_.push_back(w);
  }
  // When the context ends the wait and `w` was the head, the waiters behind it may fit now.
  detail::EndWaitOnDone on_end(*rt_, &spin_, queue_, w, kEnded,
                               [this](bool was_front, detail::WakeList& wake) noexcept {
                                 if (was_front) grant_locked(wake);
                               });
  on_end.arm(&ctx);
  detail::park_queued(*rt_, spin_, queue_, w, kNoDeadline,
                      {.kind = "WeightedSemaphore::acquire",
                       .object_id = id_,
                       .where = where,
                       .object = this,
                       .describe = &describe_wait},
                      [this, n](Waiter& granted) {
                        if (granted.status == kAcquired) give_back(n);
                      });
  on_end.disarm();
  if (w.status == kEnded) return detail::ended_error(ctx.err());
  // Handed the units, but the context ended meanwhile: prefer to fail, and give them back.
  if (ctx.done()) {
    give_back(n);
    return detail::ended_error(ctx.err());
  }
  return {};
}

bool WeightedSemaphore::try_acquire(std::int64_t n, SourceLocation where) {
  check_weight("try_acquire", n);
  if (rt_->controlled()) {
    rt_->schedule_point({.kind = "WeightedSemaphore::try_acquire",
                         .object_id = id_,
                         .where = where,
                         .progress = Progress::maybe});
    rt_->sync_acquire(id_);
  }
  std::lock_guard guard(spin_);
  if (size_ - cur_ < n || !queue_.empty()) return false;
  cur_ += n;
  return true;
}

void WeightedSemaphore::release(std::int64_t n, SourceLocation where) {
  if (n < 0) {
    throw std::invalid_argument("bubble::WeightedSemaphore::release: weight must be >= 0, got " +
                                std::to_string(n));
  }
  if (rt_->controlled()) {
    rt_->schedule_point({"WeightedSemaphore::release", id_, where});
    rt_->sync_release(id_);
  }
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  if (n > cur_) {
    throw std::logic_error("bubble::WeightedSemaphore::release: released more than held: release(" +
                           std::to_string(n) + ") with " + std::to_string(cur_) + " in use");
  }
  cur_ -= n;
  grant_locked(wake);
}

std::int64_t WeightedSemaphore::in_use() const noexcept {
  std::lock_guard guard(spin_);
  return cur_;
}

std::size_t WeightedSemaphore::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
