// Atomic operations in a bubble: the scheduling point each one is (bubble::Atomic and code
// compiled with bubble::instrument), the identities of atomic objects, and Atomic::wait's parking.

#include <atomic>
#include <stdexcept>
#include <string>
#include <string_view>

#include <bubble/detail/atomic_hooks.hpp>

#include "engine/bubble.hpp"

namespace bubble {
namespace engine {

Bubble::AtomicObject& Bubble::atomic_object(const void* object) {
  // Loops touch the same atomic again and again: the last one found is kept.
  if (object == last_atomic_address_) return *last_atomic_;
  auto [it, inserted] = atomics_.try_emplace(object);
  if (inserted) it->second.id = new_object_id();
  last_atomic_address_ = object;
  last_atomic_ = &it->second;
  return it->second;
}

void Bubble::atomic_point(const void* object, detail::AtomicSource source, detail::AtomicOp op,
                          std::memory_order order, SourceLocation where) noexcept {
  const std::uint64_t id = object != nullptr ? atomic_object(object).id : 0;
  // Loads (and compare-exchanges, until atomic_cas_outcome says they succeeded) only look.
  const bool looks = op == detail::AtomicOp::load ||
                     op == detail::AtomicOp::compare_exchange_weak ||
                     op == detail::AtomicOp::compare_exchange_strong;
  // A load's step only reads the atomic (a compare-exchange may write it: it counts as a write).
  if (deps_ != nullptr && current_ != nullptr) next_point_reads_ = op == detail::AtomicOp::load;
  schedule_point(WaitInfo{.kind = detail::atomic_op_text(source, op, order),
                          .object_id = id,
                          .where = where,
                          .progress = looks ? Progress::none : Progress::made});
  if (races_ && op != detail::AtomicOp::compare_exchange_weak &&
      op != detail::AtomicOp::compare_exchange_strong) [[unlikely]] {
    races_->atomic(race_thread(), object, op, order);
  }
}

void Bubble::atomic_cas_outcome(const void* object, bool exchanged, std::memory_order success,
                                std::memory_order failure) noexcept {
  if (exchanged) progress();  // A compare-exchange that succeeds changed something after all.
  if (races_) races_->cas_outcome(race_thread(), object, exchanged, success, failure);
}

void Bubble::atomic_order_only(const void* object, detail::AtomicOp op,
                               std::memory_order order) noexcept {
  if (races_) races_->atomic(race_thread(), object, op, order);
}

void Bubble::atomic_name(const void* object, std::string_view name) {
  AtomicObject& a = atomics_[object];
  a.id = Runtime::new_object_id(name);
}

void Bubble::atomic_forget(const void* object) noexcept {
  const auto it = atomics_.find(object);
  if (it == atomics_.end() || !it->second.waiters.empty()) return;
  if (last_atomic_address_ == object) last_atomic_address_ = nullptr;
  atomics_.erase(it);
  if (races_) races_->atomic_forgotten(object);
}

void Bubble::atomic_park(const void* object, SourceLocation where) {
  check_thread("Atomic::wait");
  if (current_ == nullptr) {
    throw std::logic_error("bubble::Atomic::wait would block in a timer callback of " + name_ +
                           "; timer callbacks must not block");
  }
  AtomicObject& a = atomic_object(object);
  Waiter w;
  prepare(w);
  a.waiters.push_back(w);
  try {
    park(w, kNoDeadline, WaitInfo{"Atomic::wait", a.id, where});
  } catch (...) {
    if (w.queued()) a.waiters.remove(w);
    throw;
  }
}

void Bubble::atomic_unpark(const void* object, bool all) noexcept {
  const auto it = atomics_.find(object);
  if (it == atomics_.end()) return;
  detail::WaitQueue& waiters = it->second.waiters;
  while (Waiter* w = waiters.pop_front()) {
    unpark(*w);
    if (!all) break;
  }
}

}  // namespace engine

namespace detail {

using engine::tl_bubble;

void atomic_point(const void* object, AtomicSource source, AtomicOp op, std::memory_order order,
                  SourceLocation where) noexcept {
  if (engine::Bubble* b = tl_bubble) b->atomic_point(object, source, op, order, where);
}

void atomic_cas_outcome(const void* object, bool exchanged, std::memory_order success,
                        std::memory_order failure) noexcept {
  if (engine::Bubble* b = tl_bubble) b->atomic_cas_outcome(object, exchanged, success, failure);
}

void atomic_order_only(const void* object, AtomicOp op, std::memory_order order) noexcept {
  if (engine::Bubble* b = tl_bubble) b->atomic_order_only(object, op, order);
}

void atomic_name(const void* object, std::string_view name) {
  if (engine::Bubble* b = tl_bubble) b->atomic_name(object, name);
}

void atomic_forget(const void* object) noexcept {
  if (engine::Bubble* b = tl_bubble) b->atomic_forget(object);
}

void atomic_park(const void* object, SourceLocation where) {
  engine::Bubble* b = tl_bubble;
  if (b == nullptr) throw std::logic_error("bubble::Atomic::wait: no bubble on this thread");
  b->atomic_park(object, where);
}

void atomic_unpark(const void* object, bool all) noexcept {
  if (engine::Bubble* b = tl_bubble) b->atomic_unpark(object, all);
}

}  // namespace detail
}  // namespace bubble
