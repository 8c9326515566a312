// bubble::instrument's runtime: definitions of the functions that GCC's and Clang's
// ThreadSanitizer instrumentation (-fsanitize=thread at compile time) calls for every atomic
// operation, fence, plain memory access and function entry and exit, so that a program compiled
// with the flag and linked with these (instead of libtsan) runs under bubble's control.
//
// Outside a bubble (no bubble runs on the calling OS thread) every hook performs the operation it
// stands for and nothing else: after one thread-local load, an atomic hook is the atomic operation
// and an access hook returns. In a bubble:
//   - an atomic operation or fence is a scheduling point, taken before the operation
//     (detail::atomic_point, as bubble::Atomic's), with its memory order's happens-before effect;
//   - a plain access goes to race detection (detail::memory_access);
//   - function entries and exits keep the thread's call stack for race reports.
//
// The interface is ThreadSanitizer's (compiler-rt's tsan_interface.h and tsan_interface_atomic.h):
// atomics take the memory order as an int (0 relaxed ... 5 seq_cst, as std::memory_order); the
// types of 8 to 128 bits are char, short, int, long long and __int128.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <bubble/detail/atomic_hooks.hpp>
#include <bubble/detail/caller_location.hpp>
#include <bubble/detail/race_hooks.hpp>

namespace {

using bubble::detail::AtomicOp;
using bubble::detail::AtomicSource;
using bubble::detail::in_controlled_thread;

using a8 = char;
using a16 = short;
using a32 = int;
using a64 = long long;
__extension__ using a128 = __int128;

std::memory_order order_of(int mo) noexcept {
  mo &= 0xffff;  // Above: flags some compilers add (hardware lock elision).
  return mo >= 0 && mo <= 5 ? static_cast<std::memory_order>(mo) : std::memory_order_seq_cst;
}

const char* op_entry_point(AtomicOp op) noexcept {
  switch (op) {
    case AtomicOp::load:
      return "atomic load";
    case AtomicOp::store:
      return "atomic store";
    case AtomicOp::exchange:
      return "atomic exchange";
    case AtomicOp::compare_exchange_weak:
      return "atomic compare_exchange_weak";
    case AtomicOp::compare_exchange_strong:
      return "atomic compare_exchange_strong";
    case AtomicOp::fetch_add:
      return "atomic fetch_add";
    case AtomicOp::fetch_sub:
      return "atomic fetch_sub";
    case AtomicOp::fetch_and:
      return "atomic fetch_and";
    case AtomicOp::fetch_or:
      return "atomic fetch_or";
    case AtomicOp::fetch_xor:
      return "atomic fetch_xor";
    case AtomicOp::fetch_nand:
      return "atomic fetch_nand";
    case AtomicOp::thread_fence:
      return "atomic_thread_fence";
    default:
      return "atomic";
  }
}

// The location of an atomic operation at return address `pc`: caller_location's, remembered in a
// small direct-mapped table per OS thread (a loop does the same operation at the same place again
// and again, and caller_location takes a lock).
bubble::SourceLocation operation_location(AtomicOp op, const void* pc) noexcept {
  struct Entry {
    const void* pc = nullptr;
    AtomicOp op = AtomicOp::load;
    bubble::SourceLocation where;
  };
  static constinit thread_local Entry table[256];
  Entry& e = table[(reinterpret_cast<std::uintptr_t>(pc) >> 2) % 256];
  if (e.pc != pc || e.op != op) {
    e = Entry{pc, op, bubble::detail::caller_location(op_entry_point(op), pc)};
  }
  return e.where;
}

// The scheduling point (and happens-before effect) of an atomic operation in a bubble, at the
// instrumented code's return address `pc`.
[[gnu::noinline]] void point(const volatile void* address, AtomicOp op, std::memory_order order,
                             const void* pc) noexcept {
  bubble::detail::atomic_point(const_cast<const void*>(address), AtomicSource::instrumented, op,
                               order, operation_location(op, pc));
}

// 128-bit operations: one lock for all of them, so that no library for wide atomics is needed.
// Every instrumented 128-bit atomic goes through it, so they are atomic with respect to each
// other (not to uninstrumented code that uses the same object with other instructions).
std::atomic_flag wide_lock = ATOMIC_FLAG_INIT;
struct WideGuard {
  WideGuard() noexcept {
    while (wide_lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~WideGuard() { wide_lock.clear(std::memory_order_release); }
  WideGuard(const WideGuard&) = delete;
  WideGuard& operator=(const WideGuard&) = delete;
};

template <class T>
T do_load(const volatile T* a, std::memory_order o) noexcept {
  if constexpr (sizeof(T) == 16) {
    WideGuard g;
    return *a;
  } else {
    // On the orders that matter for loads (x86-64: all the same instruction; others: acquire
    // or stronger) a load with a runtime order is a sequentially consistent one, which is
    // correct for every order.
    if (o == std::memory_order_relaxed) return __atomic_load_n(a, __ATOMIC_RELAXED);
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);
  }
}

template <class T>
void do_store(volatile T* a, T v, std::memory_order o) noexcept {
  if constexpr (sizeof(T) == 16) {
    WideGuard g;
    *a = v;
  } else {
    switch (o) {
      case std::memory_order_relaxed:
        __atomic_store_n(a, v, __ATOMIC_RELAXED);
        return;
      case std::memory_order_release:
        __atomic_store_n(a, v, __ATOMIC_RELEASE);
        return;
      default:
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);
        return;
    }
  }
}

template <class T>
T apply(AtomicOp op, T x, T y) noexcept {
  switch (op) {
    case AtomicOp::fetch_add:
      return static_cast<T>(x + y);
    case AtomicOp::fetch_sub:
      return static_cast<T>(x - y);
    case AtomicOp::fetch_and:
      return static_cast<T>(x & y);
    case AtomicOp::fetch_or:
      return static_cast<T>(x | y);
    case AtomicOp::fetch_xor:
      return static_cast<T>(x ^ y);
    case AtomicOp::fetch_nand:
      return static_cast<T>(~(x & y));
    default:  // exchange
      return y;
  }
}

// A read-modify-write. Sequentially consistent whatever its order: on x86-64 every order is the
// same locked instruction, and elsewhere a stronger order is still correct.
template <class T>
T do_rmw(volatile T* a, T v, AtomicOp op) noexcept {
  if constexpr (sizeof(T) == 16) {
    WideGuard g;
    const T old = *a;
    *a = apply(op, old, v);
    return old;
  } else {
    switch (op) {
      case AtomicOp::exchange:
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);
      case AtomicOp::fetch_add:
        return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
      case AtomicOp::fetch_sub:
        return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
      case AtomicOp::fetch_and:
        return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);
      case AtomicOp::fetch_or:
        return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);
      case AtomicOp::fetch_xor:
        return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);
      default:
        return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);
    }
  }
}

template <class T>
bool do_cas(volatile T* a, T* expected, T desired) noexcept {
  if constexpr (sizeof(T) == 16) {
    WideGuard g;
    if (*a == *expected) {
      *a = desired;
      return true;
    }
    *expected = *a;
    return false;
  } else {
    return __atomic_compare_exchange_n(a, expected, desired, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
  }
}

template <class T>
T load(const volatile T* a, int mo, const void* pc) noexcept {
  const std::memory_order o = order_of(mo);
  if (in_controlled_thread()) [[unlikely]]
    point(a, AtomicOp::load, o, pc);
  return do_load(a, o);
}

template <class T>
void store(volatile T* a, T v, int mo, const void* pc) noexcept {
  const std::memory_order o = order_of(mo);
  if (in_controlled_thread()) [[unlikely]]
    point(a, AtomicOp::store, o, pc);
  do_store(a, v, o);
}

template <class T>
T rmw(volatile T* a, T v, int mo, AtomicOp kind, const void* pc) noexcept {
  if (in_controlled_thread()) [[unlikely]]
    point(a, kind, order_of(mo), pc);
  return do_rmw(a, v, kind);
}

template <class T>
bool cas(volatile T* a, T* c, T v, int mo, int fmo, bool weak, const void* pc) noexcept {
  if (!in_controlled_thread()) [[likely]]
    return do_cas(a, c, v);
  const std::memory_order success = order_of(mo);
  const std::memory_order failure = order_of(fmo);
  const auto* object = const_cast<const void*>(static_cast<const volatile void*>(a));
  point(a, weak ? AtomicOp::compare_exchange_weak : AtomicOp::compare_exchange_strong, success, pc);
  // No spurious failures in a bubble: a run depends on its schedule alone.
  const bool exchanged = do_cas(a, c, v);
  bubble::detail::atomic_cas_outcome(object, exchanged, success, failure);
  return exchanged;
}

template <class T>
T cas_val(volatile T* a, T c, T v, int mo, int fmo, const void* pc) noexcept {
  T expected = c;
  cas(a, &expected, v, mo, fmo, false, pc);
  return expected;
}

// Plain accesses.
inline void access(const volatile void* address, std::size_t size, bool write,
                   const void* pc) noexcept {
  if (in_controlled_thread()) [[unlikely]]
    bubble::detail::memory_access(const_cast<const void*>(address), size, write, pc);
}

}  // namespace

// The hooks. Each passes the instrumented code's return address, so that reports name the
// access's place in the user's code.
#define BUBBLE_PC __builtin_return_address(0)

// NOLINTBEGIN(bugprone-reserved-identifier,readability-identifier-naming,bugprone-macro-parentheses):
// the names and signatures ThreadSanitizer's instrumentation calls; the macros' T is a type.
extern "C" {

void __tsan_init() {}

void __tsan_func_entry(void* call_pc) {
  if (in_controlled_thread()) [[unlikely]]
    bubble::detail::function_entry(call_pc);
}
void __tsan_func_exit() {
  if (in_controlled_thread()) [[unlikely]]
    bubble::detail::function_exit();
}

#define BUBBLE_ACCESS_HOOKS(n)                   \
  void __tsan_read##n(void* a) {                 \
    access(a, n, false, BUBBLE_PC);              \
  }                                              \
  void __tsan_write##n(void* a) {                \
    access(a, n, true, BUBBLE_PC);               \
  }                                              \
  void __tsan_unaligned_read##n(const void* a) { \
    access(a, n, false, BUBBLE_PC);              \
  }                                              \
  void __tsan_unaligned_write##n(void* a) {      \
    access(a, n, true, BUBBLE_PC);               \
  }                                              \
  void __tsan_volatile_read##n(void* a) {        \
    access(a, n, false, BUBBLE_PC);              \
  }                                              \
  void __tsan_volatile_write##n(void* a) {       \
    access(a, n, true, BUBBLE_PC);               \
  }                                              \
  void __tsan_read##n##_pc(void* a, void* pc) {  \
    access(a, n, false, pc);                     \
  }                                              \
  void __tsan_write##n##_pc(void* a, void* pc) { \
    access(a, n, true, pc);                      \
  }

BUBBLE_ACCESS_HOOKS(1)
BUBBLE_ACCESS_HOOKS(2)
BUBBLE_ACCESS_HOOKS(4)
BUBBLE_ACCESS_HOOKS(8)
BUBBLE_ACCESS_HOOKS(16)
#undef BUBBLE_ACCESS_HOOKS

void __tsan_read_range(void* a, unsigned long size) {
  access(a, size, false, BUBBLE_PC);
}
void __tsan_write_range(void* a, unsigned long size) {
  access(a, size, true, BUBBLE_PC);
}
void __tsan_read_range_pc(void* a, unsigned long size, void* pc) {
  access(a, size, false, pc);
}
void __tsan_write_range_pc(void* a, unsigned long size, void* pc) {
  access(a, size, true, pc);
}

// A virtual call reads the object's vtable pointer; a constructor or destructor writes it. A
// write of the value it already holds (a destructor of a class whose base has no virtual
// destructor body of its own) is not a change, as ThreadSanitizer also treats it.
void __tsan_vptr_update(void** vptr_p, void* new_val) {
  if (in_controlled_thread() && *vptr_p != new_val) [[unlikely]]
    bubble::detail::memory_access(vptr_p, sizeof(void*), true, BUBBLE_PC);
}
void __tsan_vptr_read(void** vptr_p) {
  access(vptr_p, sizeof(void*), false, BUBBLE_PC);
}

void* __tsan_memcpy(void* dst, const void* src, unsigned long size) {
  access(src, size, false, BUBBLE_PC);
  access(dst, size, true, BUBBLE_PC);
  return std::memcpy(dst, src, size);
}
void* __tsan_memmove(void* dst, const void* src, unsigned long size) {
  access(src, size, false, BUBBLE_PC);
  access(dst, size, true, BUBBLE_PC);
  return std::memmove(dst, src, size);
}
void* __tsan_memset(void* dst, int c, unsigned long size) {
  access(dst, size, true, BUBBLE_PC);
  return std::memset(dst, c, size);
}

#define BUBBLE_ATOMIC_HOOKS(bits, T)                                                             \
  T __tsan_atomic##bits##_load(const volatile T* a, int mo) {                                    \
    return load(a, mo, BUBBLE_PC);                                                               \
  }                                                                                              \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int mo) {                                 \
    store(a, v, mo, BUBBLE_PC);                                                                  \
  }                                                                                              \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int mo) {                                 \
    return rmw(a, v, mo, AtomicOp::exchange, BUBBLE_PC);                                         \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int mo) {                                \
    return rmw(a, v, mo, AtomicOp::fetch_add, BUBBLE_PC);                                        \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int mo) {                                \
    return rmw(a, v, mo, AtomicOp::fetch_sub, BUBBLE_PC);                                        \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int mo) {                                \
    return rmw(a, v, mo, AtomicOp::fetch_and, BUBBLE_PC);                                        \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int mo) {                                 \
    return rmw(a, v, mo, AtomicOp::fetch_or, BUBBLE_PC);                                         \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int mo) {                                \
    return rmw(a, v, mo, AtomicOp::fetch_xor, BUBBLE_PC);                                        \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int mo) {                               \
    return rmw(a, v, mo, AtomicOp::fetch_nand, BUBBLE_PC);                                       \
  }                                                                                              \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int mo, int fmo) { \
    return cas(a, c, v, mo, fmo, false, BUBBLE_PC) ? 1 : 0;                                      \
  }                                                                                              \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int mo, int fmo) {   \
    return cas(a, c, v, mo, fmo, true, BUBBLE_PC) ? 1 : 0;                                       \
  }                                                                                              \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int mo, int fmo) {       \
    return cas_val(a, c, v, mo, fmo, BUBBLE_PC);                                                 \
  }

BUBBLE_ATOMIC_HOOKS(8, a8)
BUBBLE_ATOMIC_HOOKS(16, a16)
BUBBLE_ATOMIC_HOOKS(32, a32)
BUBBLE_ATOMIC_HOOKS(64, a64)
BUBBLE_ATOMIC_HOOKS(128, a128)
#undef BUBBLE_ATOMIC_HOOKS

void __tsan_atomic_thread_fence(int mo) {
  const std::memory_order o = order_of(mo);
  if (in_controlled_thread()) [[unlikely]]
    point(nullptr, AtomicOp::thread_fence, o, BUBBLE_PC);
  if (o != std::memory_order_relaxed) __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int mo) {
  if (order_of(mo) != std::memory_order_relaxed) __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

}  // extern "C"
// NOLINTEND(bugprone-reserved-identifier,readability-identifier-naming,bugprone-macro-parentheses)
