#include <bubble/latch.hpp>

#include <stdexcept>
#include <string>

#include "primitives/parking.hpp"

namespace bubble {

Latch::Latch(std::ptrdiff_t count, Runtime& rt) : Latch(std::string_view(), count, rt) {}

Latch::Latch(std::string_view name, std::ptrdiff_t count, Runtime& rt)
    : rt_(&rt), binding_(detail::binding_of(rt)), id_(rt.new_object_id(name)), count_(count) {
  if (count < 0) {
    throw std::invalid_argument("bubble::Latch: count must be >= 0, got " + std::to_string(count));
  }
}

void Latch::count_down(std::ptrdiff_t n, SourceLocation where) {
  if (n < 0) {
    throw std::invalid_argument("bubble::Latch::count_down: n must be >= 0, got " +
                                std::to_string(n));
  }
  if (rt_->controlled()) {
    rt_->schedule_point({"Latch::count_down", id_, where});
    rt_->sync_release(id_);
  }
  detail::WakeList wake(*rt_);  // Unparks after the guard has released spin_.
  std::lock_guard guard(spin_);
  if (n > count_) {
    throw std::logic_error("bubble::Latch::count_down: n = " + std::to_string(n) +
                           " exceeds the remaining count " + std::to_string(count_));
  }
  count_ -= n;
  if (count_ != 0) return;
  while (Waiter* w = queue_.pop_front()) wake.add(*w);
}

bool Latch::try_wait(SourceLocation where) const {
  if (rt_->controlled()) {
    rt_->schedule_point(
        {.kind = "Latch::try_wait", .object_id = id_, .where = where, .progress = Progress::none});
    rt_->sync_acquire(id_);
  }
  std::lock_guard guard(spin_);
  return count_ == 0;
}

void Latch::wait_impl(const char* kind, SourceLocation where) const {
  detail::check_caller(binding_, rt_, "Latch", id_, kind);
  if (rt_->controlled()) {
    rt_->schedule_point({kind, id_, where});
    rt_->sync_acquire(id_);
  }
  Waiter w;
  {
    std::lock_guard guard(spin_);
    if (count_ == 0) return;
    rt_->prepare(w);
    queue_.push_back(w);
  }
  detail::park_queued(*rt_, spin_, queue_, w, kNoDeadline, {kind, id_, where});
}

void Latch::wait(SourceLocation where) const {
  wait_impl("Latch::wait", where);
}

void Latch::arrive_and_wait(std::ptrdiff_t n, SourceLocation where) {
  // Checked before counting down: a misused call changes nothing.
  detail::check_caller(binding_, rt_, "Latch", id_, "Latch::arrive_and_wait");
  count_down(n, where);
  wait_impl("Latch::arrive_and_wait", where);
}

std::ptrdiff_t Latch::count() const noexcept {
  std::lock_guard guard(spin_);
  return count_;
}

std::size_t Latch::waiters() const noexcept {
  std::lock_guard guard(spin_);
  return queue_.size();
}

}  // namespace bubble
