#include <bubble/notification.hpp>

#include <optional>

#include "primitives/parking.hpp"

namespace bubble {
namespace {

// Waiter::status values of a Notification waiter.
constexpr int kWaiting = 0;
constexpr int kNotified = 1;
constexpr int kEnded = 2;  // The context ended first.

}  // namespace

Notification::Notification(Runtime& rt) noexcept
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id()) {}

Notification::Notification(std::string_view name, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)) {}

// A waiter may see notified_ on the lock-free fast path (wait, has_been_notified) while notify()
// still holds spin_, and then destroy the Notification. Taking spin_ here waits for that notify to
// release it (notify touches nothing of *this afterwards: it unparks with the lock released).
// absl::Notification's destructor takes its mutex for the same reason.
Notification::~Notification() {
  std::lock_guard guard(spin_);
}

void Notification::notify(SourceLocation where) {
  if (rt_->controlled()) {
    rt_->schedule_point({"Notification::notify", id_, where});
    rt_->sync_release(id_);
  }
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  if (notified_.load(std::memory_order_relaxed)) return;
  notified_.store(true, std::memory_order_release);
  while (Waiter* w = queue_.pop_front()) {
    w->status = kNotified;
    wake.add(*w);
  }
}

bool Notification::has_been_notified(SourceLocation where) const {
  if (rt_->controlled()) {
    rt_->schedule_point({.kind = "Notification::has_been_notified",
                         .object_id = id_,
                         .where = where,
                         .progress = Progress::none});
    rt_->sync_acquire(id_);
  }
  return notified_.load(std::memory_order_acquire);
}

bool Notification::wait_impl(TimePoint deadline, const Context* ctx, const char* kind,
                             SourceLocation where) const {
  detail::check_caller(binding_, rt_, "Notification", id_, kind);
  if (rt_->controlled()) {
    rt_->schedule_point({kind, id_, where});
    rt_->sync_acquire(id_);
  }
  if (notified_.load(std::memory_order_acquire)) return true;
  if (ctx != nullptr && ctx->done()) return false;
  Waiter w;
  {
    std::lock_guard guard(spin_);
    if (notified_.load(std::memory_order_relaxed)) return true;
    if (deadline <= rt_->now()) return false;
    w.status = kWaiting;
    rt_->prepare(w);
    queue_.push_back(w);
  }
  detail::EndWaitOnDone on_end(*rt_, &spin_, queue_, w, kEnded);
  on_end.arm(ctx);
  const bool woken = detail::park_queued(*rt_, spin_, queue_, w, deadline, {kind, id_, where});
  return woken && w.status == kNotified;
}

void Notification::wait(SourceLocation where) const {
  wait_impl(kNoDeadline, nullptr, "Notification::wait", where);
}

std::error_code Notification::wait(const Context& ctx, SourceLocation where) const {
  if (wait_impl(kNoDeadline, &ctx, "Notification::wait", where)) return {};
  return detail::ended_error(ctx.err());
}

bool Notification::wait_until(TimePoint deadline, SourceLocation where) const {
  return wait_impl(deadline, nullptr, "Notification::wait_until", where);
}

bool Notification::wait_for(Duration timeout, SourceLocation where) const {
  return wait_impl(detail::deadline_after(*rt_, timeout), nullptr, "Notification::wait_for", where);
}

std::size_t Notification::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
