#include "bubble_stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUBBLE_STACK_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define BUBBLE_STACK_ASAN 1
#endif
#ifdef BUBBLE_STACK_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace bubble::detail {
namespace {

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// The free stacks of one size, cached per OS thread. A stack is identified by the lowest address
// of its mapping (the guard page). `free` has room for kMaxPooled stacks from the start, so that
// deallocate(), which is noexcept, never allocates.
struct SizeClass {
  std::size_t usable = 0;
  std::vector<void*> free;
};

class Pool {
 public:
  ~Pool() {
    for (SizeClass& c : classes_) {
      for (void* base : c.free) ::munmap(base, c.usable + page_size());
    }
  }
  // The class of `usable`-sized stacks, created (with its reserved free list) if needed.
  SizeClass& of(std::size_t usable) {
    if (SizeClass* c = find(usable)) return *c;
    SizeClass c{usable, {}};
    c.free.reserve(PooledStack::kMaxPooled);
    classes_.push_back(std::move(c));
    return classes_.back();
  }
  // The existing class of `usable`-sized stacks, or nullptr. Never allocates.
  SizeClass* find(std::size_t usable) noexcept {
    for (SizeClass& c : classes_) {
      if (c.usable == usable) return &c;
    }
    return nullptr;
  }

 private:
  std::vector<SizeClass> classes_;
};

thread_local Pool tl_pool;

}  // namespace

std::size_t PooledStack::round_size(std::size_t usable_size) noexcept {
  const std::size_t page = page_size();
  const std::size_t min = 16 * 1024;
  if (usable_size < min) usable_size = min;
  return (usable_size + page - 1) / page * page;
}

boost::context::stack_context PooledStack::allocate() {
  const std::size_t usable = round_size(size_);
  SizeClass& c = tl_pool.of(usable);
  void* base = nullptr;
  if (!c.free.empty()) {
    base = c.free.back();
    c.free.pop_back();
  } else {
    const std::size_t total = usable + page_size();
    base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    if (::mprotect(base, page_size(), PROT_NONE) != 0) {
      ::munmap(base, total);
      throw std::bad_alloc();
    }
  }
  boost::context::stack_context sctx;
  sctx.size = usable;
  sctx.sp = static_cast<char*>(base) + page_size() + usable;
  if (out_ != nullptr) *out_ = sctx;
  return sctx;
}

void PooledStack::deallocate(boost::context::stack_context& sctx) noexcept {
  const std::size_t usable = sctx.size;
  char* bottom = static_cast<char*>(sctx.sp) - usable;
  void* base = bottom - page_size();
#ifdef BUBBLE_STACK_ASAN
  // Frames that never returned (the fiber's entry) leave poisoned redzones behind.
  __asan_unpoison_memory_region(bottom, usable);
#endif
  // The class exists (allocate() created it on this OS thread, where the fibers of a run live)
  // and its free list has room reserved: no allocation here.
  SizeClass* c = tl_pool.find(usable);
  if (c != nullptr && c->free.size() < kMaxPooled) {
    c->free.push_back(base);
  } else {
    ::munmap(base, usable + page_size());
  }
}

}  // namespace bubble::detail
