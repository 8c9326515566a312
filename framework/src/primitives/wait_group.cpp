#include <bubble/wait_group.hpp>

#include <limits>
#include <stdexcept>
#include <string>

#include "primitives/parking.hpp"

namespace bubble {

WaitGroup::WaitGroup(Runtime& rt) noexcept
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id()) {}

WaitGroup::WaitGroup(std::string_view name, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)) {}

void WaitGroup::add_impl(std::int64_t delta, const char* kind, SourceLocation where) {
  if (rt_->controlled()) {
    rt_->schedule_point({kind, id_, where});
    rt_->sync_release(id_);
  }
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  if (delta < 0 ? count_ < -delta : delta > std::numeric_limits<std::int64_t>::max() - count_) {
    throw std::logic_error(std::string("bubble::WaitGroup: ") +
                           (delta < 0 ? "negative counter" : "counter overflow") + ": add(" +
                           std::to_string(delta) + ") with counter " + std::to_string(count_));
  }
  count_ += delta;
  if (count_ != 0) return;
  while (Waiter* w = queue_.pop_front()) wake.add(*w);
}

void WaitGroup::add(std::int64_t delta, SourceLocation where) {
  add_impl(delta, "WaitGroup::add", where);
}

void WaitGroup::done(SourceLocation where) {
  add_impl(-1, "WaitGroup::done", where);
}

void WaitGroup::wait(SourceLocation where) {
  detail::check_caller(binding_, rt_, "WaitGroup", id_, "WaitGroup::wait");
  if (rt_->controlled()) {
    rt_->schedule_point({"WaitGroup::wait", id_, where});
    rt_->sync_acquire(id_);
  }
  Waiter w;
  {
    std::lock_guard guard(spin_);
    if (count_ == 0) return;
    rt_->prepare(w);
    queue_.push_back(w);
  }
  detail::park_queued(*rt_, spin_, queue_, w, kNoDeadline, {"WaitGroup::wait", id_, where});
}

std::int64_t WaitGroup::count() const noexcept {
  std::lock_guard guard(spin_);
  return count_;
}

std::size_t WaitGroup::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
