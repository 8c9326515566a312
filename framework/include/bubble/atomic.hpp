#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <bubble/detail/atomic_hooks.hpp>
#include <bubble/detail/not_instrumented.hpp>
#include <bubble/source_location.hpp>

namespace bubble {

// Atomic<T> is std::atomic<T> made visible to a bubble (as loom's loom::sync::atomic is to loom):
// lock-free code written with it runs unchanged on real threads and in a bubble, where the
// scheduler explores the interleavings of its operations.
//
// Interface: std::atomic<T>'s (C++20), with the same memory orders and the same results: load,
// store, exchange, the compare-exchanges, wait/notify, the fetch_ operations of integral, pointer
// and floating-point types and the operators built on them. Every named operation takes a
// SourceLocation as its last, defaulted argument, for traces and reports. An Atomic may be named,
// as bubble's primitives are: `Atomic<std::uint64_t> tail("inbox.tail", 0)`.
//
// On real threads (any OS thread that is not running a bubble) every operation is the
// std::atomic operation and one thread-local load beside it (tools/bench/atomic_bench.cpp
// measures the difference against std::atomic); the name is not kept.
//
// In a bubble every operation is a scheduling point, taken just before the operation, which then
// runs before any other bubble thread does: the strategy may switch threads between any two
// atomic operations, so the interleavings of lock-free code are explored, recorded in the run's
// schedule and replayed as every other decision is. With Options::trace each operation is an `op`
// event naming the operation and its memory order ("Atomic::fetch_add(acq_rel)") and the object
// (its name and id). The object's identity is its address: it gets the run's next object id at
// its construction in the bubble (named or not) or at its first operation in the run, so ids are
// the same in every run of one program and schedule. The memory orders also define the
// happens-before edges that race detection follows (bubble::instrument): a release store or
// read-modify-write and an acquire load of its value synchronize; relaxed operations do not.
// Bubble threads run one at a time, so every load reads the latest value stored (the model is
// sequentially consistent; weaker outcomes that the C++ memory model allows are not explored).
// wait() blocks the bubble thread (counted as blocked: deadlocks are reported, time may jump)
// until a notify on the same atomic; the value is checked again on every wake-up.
//
// unsync_load() reads without a scheduling point, for a caller that knows no other thread writes
// the value meanwhile (it holds the lock under which every write is made), as loom's unsync_load.
//
// Thread safety: as std::atomic<T>. Atomic<T> has std::atomic<T>'s size and alignment. It is
// neither copyable nor movable.
template <class T>
class Atomic {
  static constexpr bool kIntegral = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  static constexpr bool kArithmetic = kIntegral || std::is_floating_point_v<T>;
  static constexpr bool kPointer =
      std::is_pointer_v<T> && std::is_object_v<std::remove_pointer_t<T>>;
  // The argument of fetch_add / fetch_sub: the value type, or ptrdiff_t for pointers.
  using Operand = std::conditional_t<std::is_pointer_v<T>, std::ptrdiff_t, T>;

 public:
  using value_type = T;

  static constexpr bool is_always_lock_free = std::atomic<T>::is_always_lock_free;

  constexpr Atomic() noexcept(std::is_nothrow_default_constructible_v<T>) = default;
  BUBBLE_NOT_INSTRUMENTED constexpr Atomic(T desired) noexcept
      : value_(desired) {}  // NOLINT: as std::atomic.
  // An atomic called `name` in traces and reports (the name is kept only when constructed inside
  // a bubble thread; objects made outside a bubble are unnamed in its reports).
  BUBBLE_NOT_INSTRUMENTED Atomic(std::string_view name, T desired) : value_(desired) {
    if (detail::in_controlled_thread()) [[unlikely]]
      detail::atomic_name(this, name);
  }
  BUBBLE_NOT_INSTRUMENTED ~Atomic() {
    if (detail::in_controlled_thread()) [[unlikely]]
      detail::atomic_forget(this);
  }
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  BUBBLE_NOT_INSTRUMENTED bool is_lock_free() const noexcept { return value_.is_lock_free(); }

  BUBBLE_NOT_INSTRUMENTED T load(std::memory_order order = std::memory_order_seq_cst,
                                 SourceLocation where = SourceLocation::current()) const noexcept {
    point(detail::AtomicOp::load, order, where);
    return value_.load(order);
  }
  BUBBLE_NOT_INSTRUMENTED void store(T desired, std::memory_order order = std::memory_order_seq_cst,
                                     SourceLocation where = SourceLocation::current()) noexcept {
    point(detail::AtomicOp::store, order, where);
    value_.store(desired, order);
  }
  BUBBLE_NOT_INSTRUMENTED T exchange(T desired, std::memory_order order = std::memory_order_seq_cst,
                                     SourceLocation where = SourceLocation::current()) noexcept {
    point(detail::AtomicOp::exchange, order, where);
    return value_.exchange(desired, order);
  }

  BUBBLE_NOT_INSTRUMENTED bool compare_exchange_weak(
      T& expected, T desired, std::memory_order success, std::memory_order failure,
      SourceLocation where = SourceLocation::current()) noexcept {
    if (!detail::in_controlled_thread()) [[likely]]
      return value_.compare_exchange_weak(expected, desired, success, failure);
    return cas_in_bubble<true>(expected, desired, success, failure, where);
  }
  BUBBLE_NOT_INSTRUMENTED bool compare_exchange_weak(
      T& expected, T desired, std::memory_order order = std::memory_order_seq_cst,
      SourceLocation where = SourceLocation::current()) noexcept {
    return compare_exchange_weak(expected, desired, order, failure_order(order), where);
  }
  BUBBLE_NOT_INSTRUMENTED bool compare_exchange_strong(
      T& expected, T desired, std::memory_order success, std::memory_order failure,
      SourceLocation where = SourceLocation::current()) noexcept {
    if (!detail::in_controlled_thread()) [[likely]]
      return value_.compare_exchange_strong(expected, desired, success, failure);
    return cas_in_bubble<false>(expected, desired, success, failure, where);
  }
  BUBBLE_NOT_INSTRUMENTED bool compare_exchange_strong(
      T& expected, T desired, std::memory_order order = std::memory_order_seq_cst,
      SourceLocation where = SourceLocation::current()) noexcept {
    return compare_exchange_strong(expected, desired, order, failure_order(order), where);
  }

  // Blocks while the value equals `old` (compared as std::atomic::wait compares), until a notify
  // finds it changed. In a bubble the thread is parked on this atomic ("Atomic::wait" in
  // deadlock reports); it may throw bubble::Unwind there, as every blocking call of a bubble may.
  BUBBLE_NOT_INSTRUMENTED void wait(T old, std::memory_order order = std::memory_order_seq_cst,
                                    SourceLocation where = SourceLocation::current()) const {
    if (!detail::in_controlled_thread()) [[likely]] {
      value_.wait(old, order);
      return;
    }
    detail::atomic_point(this, detail::AtomicSource::bubble_atomic, detail::AtomicOp::wait, order,
                         where);
    while (same_value(value_.load(order), old)) detail::atomic_park(this, where);
  }
  BUBBLE_NOT_INSTRUMENTED void notify_one(
      SourceLocation where = SourceLocation::current()) noexcept {
    if (!detail::in_controlled_thread()) [[likely]] {
      value_.notify_one();
      return;
    }
    detail::atomic_point(this, detail::AtomicSource::bubble_atomic, detail::AtomicOp::notify_one,
                         std::memory_order_relaxed, where);
    detail::atomic_unpark(this, false);
  }
  BUBBLE_NOT_INSTRUMENTED void notify_all(
      SourceLocation where = SourceLocation::current()) noexcept {
    if (!detail::in_controlled_thread()) [[likely]] {
      value_.notify_all();
      return;
    }
    detail::atomic_point(this, detail::AtomicSource::bubble_atomic, detail::AtomicOp::notify_all,
                         std::memory_order_relaxed, where);
    detail::atomic_unpark(this, true);
  }

  // A load that is not a scheduling point and adds no happens-before edge: only for a caller
  // that holds the lock under which every store to this atomic is made (or otherwise knows that
  // no other thread stores meanwhile).
  BUBBLE_NOT_INSTRUMENTED T unsync_load() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

  // --- Arithmetic and bitwise read-modify-writes, as std::atomic has them ------------------

  BUBBLE_NOT_INSTRUMENTED T fetch_add(Operand v,
                                      std::memory_order order = std::memory_order_seq_cst,
                                      SourceLocation where = SourceLocation::current()) noexcept
      requires(kArithmetic || kPointer) {
    point(detail::AtomicOp::fetch_add, order, where);
    return value_.fetch_add(v, order);
  }
  BUBBLE_NOT_INSTRUMENTED T fetch_sub(Operand v,
                                      std::memory_order order = std::memory_order_seq_cst,
                                      SourceLocation where = SourceLocation::current()) noexcept
      requires(kArithmetic || kPointer) {
    point(detail::AtomicOp::fetch_sub, order, where);
    return value_.fetch_sub(v, order);
  }
  BUBBLE_NOT_INSTRUMENTED T
  fetch_and(T v, std::memory_order order = std::memory_order_seq_cst,
            SourceLocation where = SourceLocation::current()) noexcept requires kIntegral {
    point(detail::AtomicOp::fetch_and, order, where);
    return value_.fetch_and(v, order);
  }
  BUBBLE_NOT_INSTRUMENTED T
  fetch_or(T v, std::memory_order order = std::memory_order_seq_cst,
           SourceLocation where = SourceLocation::current()) noexcept requires kIntegral {
    point(detail::AtomicOp::fetch_or, order, where);
    return value_.fetch_or(v, order);
  }
  BUBBLE_NOT_INSTRUMENTED T
  fetch_xor(T v, std::memory_order order = std::memory_order_seq_cst,
            SourceLocation where = SourceLocation::current()) noexcept requires kIntegral {
    point(detail::AtomicOp::fetch_xor, order, where);
    return value_.fetch_xor(v, order);
  }

  // --- Operators, sequentially consistent (no source location: they take no extra argument) --

  BUBBLE_NOT_INSTRUMENTED operator T() const noexcept { return load(); }  // NOLINT: as std::atomic.
  BUBBLE_NOT_INSTRUMENTED T operator=(T desired) noexcept {
    store(desired);
    return desired;
  }
  BUBBLE_NOT_INSTRUMENTED T operator++() noexcept requires(kIntegral || kPointer) {
    return fetch_add(1) + 1;
  }
  BUBBLE_NOT_INSTRUMENTED T operator++(int) noexcept requires(kIntegral || kPointer) {
    return fetch_add(1);
  }
  BUBBLE_NOT_INSTRUMENTED T operator--() noexcept requires(kIntegral || kPointer) {
    return fetch_sub(1) - 1;
  }
  BUBBLE_NOT_INSTRUMENTED T operator--(int) noexcept requires(kIntegral || kPointer) {
    return fetch_sub(1);
  }
  BUBBLE_NOT_INSTRUMENTED T operator+=(Operand v) noexcept requires(kArithmetic || kPointer) {
    return fetch_add(v) + v;
  }
  BUBBLE_NOT_INSTRUMENTED T operator-=(Operand v) noexcept requires(kArithmetic || kPointer) {
    return fetch_sub(v) - v;
  }
  BUBBLE_NOT_INSTRUMENTED T operator&=(T v) noexcept requires kIntegral { return fetch_and(v) & v; }
  BUBBLE_NOT_INSTRUMENTED T operator|=(T v) noexcept requires kIntegral { return fetch_or(v) | v; }
  BUBBLE_NOT_INSTRUMENTED T operator^=(T v) noexcept requires kIntegral { return fetch_xor(v) ^ v; }

 private:
  static constexpr std::memory_order failure_order(std::memory_order order) noexcept {
    if (order == std::memory_order_acq_rel) return std::memory_order_acquire;
    if (order == std::memory_order_release) return std::memory_order_relaxed;
    return order;
  }

  // Compares values as std::atomic::wait does: by their object representations.
  BUBBLE_NOT_INSTRUMENTED static bool same_value(const T& a, const T& b) noexcept {
    return __builtin_memcmp(&a, &b, sizeof(T)) == 0;
  }

  BUBBLE_NOT_INSTRUMENTED void point(detail::AtomicOp op, std::memory_order order,
                                     SourceLocation where) const noexcept {
    if (detail::in_controlled_thread()) [[unlikely]]
      detail::atomic_point(this, detail::AtomicSource::bubble_atomic, op, order, where);
  }

  template <bool kWeak>
  BUBBLE_NOT_INSTRUMENTED bool cas_in_bubble(T& expected, T desired, std::memory_order success,
                                             std::memory_order failure,
                                             SourceLocation where) noexcept {
    detail::atomic_point(
        this, detail::AtomicSource::bubble_atomic,
        kWeak ? detail::AtomicOp::compare_exchange_weak : detail::AtomicOp::compare_exchange_strong,
        success, where);
    // A weak compare-exchange fails spuriously only on real processors: here it behaves as the
    // strong one, so that a run is a function of its schedule.
    const bool exchanged = value_.compare_exchange_strong(expected, desired, success, failure);
    detail::atomic_cas_outcome(this, exchanged, success, failure);
    return exchanged;
  }

  std::atomic<T> value_;
};

static_assert(sizeof(Atomic<int>) == sizeof(std::atomic<int>));
static_assert(alignof(Atomic<long long>) == alignof(std::atomic<long long>));

}  // namespace bubble
