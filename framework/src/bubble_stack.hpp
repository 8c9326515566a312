#pragma once

// Private: the pooled, guard-paged stacks of bubble threads.

#include <cstddef>

#include <boost/context/stack_context.hpp>

namespace bubble::detail {

// PooledStack is a Boost.Context stack allocator. Each stack is an mmap'ed region with a
// PROT_NONE guard page below it (a stack overflow faults instead of corrupting memory). Released
// stacks go to a per-OS-thread free list (bubble threads of one run all live on one OS thread)
// and are reused by later threads and later runs, so a run maps no memory once the pool is warm.
// At most kMaxPooled stacks of each size are kept; the rest are unmapped.
class PooledStack {
 public:
  static constexpr std::size_t kMaxPooled = 1024;

  // `out`, if not null, receives the context of every stack allocate() hands out.
  explicit PooledStack(std::size_t usable_size,
                       boost::context::stack_context* out = nullptr) noexcept
      : size_(usable_size), out_(out) {}

  // Throws std::bad_alloc if the memory cannot be mapped.
  boost::context::stack_context allocate();
  // Returns the stack to the pool of the calling OS thread, or unmaps it when the pool is full.
  // Never allocates (the pool's room is reserved when its first stack is allocated).
  void deallocate(boost::context::stack_context& sctx) noexcept;

  // The usable size rounded up to whole pages, as allocate() will provide.
  static std::size_t round_size(std::size_t usable_size) noexcept;

 private:
  std::size_t size_;
  boost::context::stack_context* out_;
};

}  // namespace bubble::detail
