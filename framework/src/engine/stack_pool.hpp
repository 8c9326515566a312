#pragma once

// Private: the pooled, guard-paged stacks of bubble threads.

#include <cstddef>
#include <cstdint>

#include <boost/context/stack_context.hpp>

namespace bubble::detail {

// PooledStack is a Boost.Context stack allocator for bubble threads.
//
// Layout. Stacks are carved out of chunks: one anonymous mapping holds kStacksPerChunk slots,
// each a guard page followed by the usable stack. The guard page faults on any access, so a stack
// overflow crashes with SIGSEGV instead of corrupting the stack below. Where the kernel supports
// guard markers (Linux 6.13's madvise(MADV_GUARD_INSTALL)), guard pages live in the page tables
// and a whole chunk stays one kernel mapping (VMA), so the number of threads is bounded by memory,
// not by vm.max_map_count (65,530 by default). On older kernels the guard page is mprotect'ed to
// PROT_NONE, which splits the chunk into two mappings per stack, as one mmap per stack would.
// guard_kind() says which one this process uses. Canary stacks (guarded = false) have no guard
// page: a chunk of them is one mapping on every kernel.
//
// Pooling. Released stacks go to a per-OS-thread free list (the threads of one run all live on
// one OS thread) and are reused by later threads and later runs, most recently released first
// (their pages are warm). There is no fixed cap: the pool grows to what the threads alive at once
// need. When a run ends, run_ended() trims the pool of the calling OS thread to the most stacks
// that run had in use at once (rounded up to whole chunks): repeating a run maps nothing, and the
// memory of a big run is returned to the system after the next, smaller one.
class PooledStack {
 public:
  static constexpr std::size_t kStacksPerChunk = 64;

  // How guard pages are placed (see above).
  enum class GuardKind {
    marker,    // madvise(MADV_GUARD_INSTALL): no extra kernel mapping.
    mprotect,  // mprotect(PROT_NONE): two kernel mappings per stack.
  };

  // `out`, if not null, receives the context of every stack allocate() hands out.
  // The value of a canary stack's lowest word while it has not overflowed.
  static constexpr std::uint64_t kCanary = 0x5ca1ab1e0ddba11ULL;

  // `guarded`: stacks with a guard page; otherwise with a canary word (kCanary) at the lowest
  // address of the usable stack, written by allocate() (see Options::stack_guard).
  explicit PooledStack(std::size_t usable_size, bool guarded = true,
                       boost::context::stack_context* out = nullptr) noexcept
      : size_(usable_size), guarded_(guarded), out_(out) {}

  // A stack of at least the usable size (rounded by round_size()). Throws std::bad_alloc if the
  // memory cannot be mapped.
  boost::context::stack_context allocate();
  // Returns the stack to the pool of the calling OS thread. Never allocates (the free list has
  // room for every stack of the pool). A stack returned twice, or to another OS thread's pool,
  // aborts the process: it would otherwise be handed to two threads at once.
  void deallocate(boost::context::stack_context& sctx) noexcept;

  // The usable size rounded up to whole pages, as allocate() will provide.
  static std::size_t round_size(std::size_t usable_size) noexcept;

  // Called when a run on this OS thread ends: trims the pool as described above.
  static void run_ended() noexcept;

  // The pool of the calling OS thread, all sizes together.
  struct Stats {
    std::size_t stacks = 0;  // Stacks mapped (in use or free).
    std::size_t in_use = 0;  // Stacks handed out and not returned.
    std::size_t chunks = 0;  // Chunks mapped.
  };
  static Stats stats() noexcept;

  // How this process places guard pages (decided on the first chunk).
  static GuardKind guard_kind() noexcept;

 private:
  std::size_t size_;
  bool guarded_;
  boost::context::stack_context* out_;
};

}  // namespace bubble::detail
