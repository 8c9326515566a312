#include "engine/stack_pool.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
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

// Linux 6.13 guard markers (include/uapi/asm-generic/mman-common.h); older C library headers
// do not define it, and older kernels reject it with EINVAL.
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

namespace bubble::detail {
namespace {

constexpr std::size_t kPerChunk = PooledStack::kStacksPerChunk;
static_assert(kPerChunk == 64, "Chunk::in_use is a 64-bit mask");

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

[[noreturn]] void internal_error(const char* what) noexcept {
  std::fprintf(stderr, "bubble: internal error: %s\n", what);
  std::abort();
}

// How guard pages are placed, decided by the first chunk of the process: 0 not yet, else
// GuardKind + 1.
std::atomic<int> g_guard_kind{0};

// Makes the page at `guard` fault on access. False if the kernel refused.
bool install_guard(char* guard) noexcept {
  int kind = g_guard_kind.load(std::memory_order_relaxed);
  if (kind == 0 || kind == static_cast<int>(PooledStack::GuardKind::marker) + 1) {
    // The system call itself: AddressSanitizer's madvise interceptor refuses advice it does not
    // know.
    if (::syscall(SYS_madvise, guard, page_size(), MADV_GUARD_INSTALL) == 0) {
      g_guard_kind.store(static_cast<int>(PooledStack::GuardKind::marker) + 1,
                         std::memory_order_relaxed);
      return true;
    }
    if (errno != EINVAL || kind != 0) return false;
    g_guard_kind.store(static_cast<int>(PooledStack::GuardKind::mprotect) + 1,
                       std::memory_order_relaxed);
  }
  return ::mprotect(guard, page_size(), PROT_NONE) == 0;
}

// One mapping of kPerChunk slots; a slot is a guard page followed by the usable stack.
struct Chunk {
  char* base = nullptr;      // The lowest address (the first slot's guard page).
  std::uint64_t in_use = 0;  // Bit i: slot i is handed out.
};

// The stacks of one usable size, cached per OS thread. A stack is named by its slot: the
// address of its guard page.
struct SizeClass {
  std::size_t usable = 0;
  bool guarded = true;        // Slots start with a guard page (else: canary stacks).
  std::size_t stride = 0;     // usable (+ one guard page if guarded).
  std::vector<Chunk> chunks;  // Sorted by base.
  std::vector<char*> free;    // Capacity >= every slot of `chunks`: pushing never allocates.
  std::size_t in_use = 0;
  std::size_t peak = 0;  // The most stacks in use at once since the last run_ended().

  std::size_t chunk_bytes() const noexcept { return stride * kPerChunk; }

  // The chunk holding `slot`, or nullptr. Never allocates.
  Chunk* chunk_of(const char* slot) noexcept {
    auto it = std::upper_bound(chunks.begin(), chunks.end(), slot,
                               [](const char* s, const Chunk& c) { return s < c.base; });
    if (it == chunks.begin()) return nullptr;
    --it;
    if (slot >= it->base + chunk_bytes()) return nullptr;
    return &*it;
  }
  std::uint64_t bit_of(const Chunk& c, const char* slot) const noexcept {
    return std::uint64_t{1} << (static_cast<std::size_t>(slot - c.base) / stride);
  }

  // Maps a new chunk and puts its slots on the free list. Throws std::bad_alloc.
  void grow() {
    const std::size_t bytes = chunk_bytes();
    void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) throw std::bad_alloc();
    char* base = static_cast<char*>(mem);
    try {
      for (std::size_t i = 0; guarded && i < kPerChunk; ++i) {
        if (!install_guard(base + i * stride)) throw std::bad_alloc();
      }
      free.reserve((chunks.size() + 1) * kPerChunk);
      auto at = std::upper_bound(chunks.begin(), chunks.end(), base,
                                 [](const char* b, const Chunk& c) { return b < c.base; });
      chunks.insert(at, Chunk{base, 0});
    } catch (...) {
      ::munmap(mem, bytes);
      throw;
    }
    // Highest slot first, so that the lowest is handed out first.
    for (std::size_t i = kPerChunk; i-- > 0;) free.push_back(base + i * stride);
  }

  // Unmaps chunks with no stack in use until at most `keep` chunks remain. Never allocates.
  void trim(std::size_t keep) noexcept {
    std::size_t count = chunks.size();
    for (auto it = chunks.rbegin(); it != chunks.rend() && count > keep; ++it) {
      if (it->in_use != 0) continue;
      ::munmap(it->base, chunk_bytes());
      it->base = nullptr;
      --count;
    }
    if (count == chunks.size()) return;
    chunks.erase(std::remove_if(chunks.begin(), chunks.end(),
                                [](const Chunk& c) { return c.base == nullptr; }),
                 chunks.end());
    free.erase(std::remove_if(free.begin(), free.end(),
                              [this](const char* slot) { return chunk_of(slot) == nullptr; }),
               free.end());
  }
};

class Pool {
 public:
  ~Pool() {
    // Chunks with a stack still in use (a thread abandoned by its run) stay mapped.
    for (SizeClass& c : classes_) {
      for (const Chunk& chunk : c.chunks) {
        if (chunk.in_use == 0) ::munmap(chunk.base, c.chunk_bytes());
      }
    }
  }
  // The class of `usable`-sized stacks, guarded or not, created if needed.
  SizeClass& of(std::size_t usable, bool guarded) {
    if (SizeClass* c = find(usable, guarded)) return *c;
    SizeClass c;
    c.usable = usable;
    c.guarded = guarded;
    c.stride = usable + (guarded ? page_size() : 0);
    classes_.push_back(std::move(c));
    return classes_.back();
  }
  // The existing class, or nullptr. Never allocates.
  SizeClass* find(std::size_t usable, bool guarded) noexcept {
    for (SizeClass& c : classes_) {
      if (c.usable == usable && c.guarded == guarded) return &c;
    }
    return nullptr;
  }
  std::vector<SizeClass>& classes() noexcept { return classes_; }

 private:
  std::vector<SizeClass> classes_;
};

thread_local Pool tl_pool;

}  // namespace

std::size_t PooledStack::round_size(std::size_t usable_size) noexcept {
  const std::size_t page = page_size();
  const std::size_t min = std::size_t{16} * 1024;
  if (usable_size < min) usable_size = min;
  return (usable_size + page - 1) / page * page;
}

boost::context::stack_context PooledStack::allocate() {
  const std::size_t usable = round_size(size_);
  SizeClass& c = tl_pool.of(usable, guarded_);
  if (c.free.empty()) c.grow();
  char* slot = c.free.back();
  Chunk* chunk = c.chunk_of(slot);
  if (chunk == nullptr) internal_error("a free stack belongs to no chunk of the pool");
  const std::uint64_t bit = c.bit_of(*chunk, slot);
  if ((chunk->in_use & bit) != 0) internal_error("a stack in use is on the pool's free list");
  c.free.pop_back();
  chunk->in_use |= bit;
  if (++c.in_use > c.peak) c.peak = c.in_use;
  char* bottom = slot + (guarded_ ? page_size() : 0);
  if (!guarded_) std::memcpy(bottom, &kCanary, sizeof kCanary);
  boost::context::stack_context sctx;
  sctx.size = usable;
  sctx.sp = bottom + usable;
  if (out_ != nullptr) *out_ = sctx;
  return sctx;
}

void PooledStack::deallocate(boost::context::stack_context& sctx) noexcept {
  const std::size_t usable = sctx.size;
  char* bottom = static_cast<char*>(sctx.sp) - usable;
  char* slot = bottom - (guarded_ ? page_size() : 0);
#ifdef BUBBLE_STACK_ASAN
  // Frames that never returned (the fiber's entry) leave poisoned redzones behind.
  __asan_unpoison_memory_region(bottom, usable);
#endif
  // The class exists (allocate() created it on this OS thread, where the fibers of a run live)
  // and its free list has room for every slot: no allocation here.
  SizeClass* c = tl_pool.find(usable, guarded_);
  Chunk* chunk = c != nullptr ? c->chunk_of(slot) : nullptr;
  const std::uint64_t bit = chunk != nullptr ? c->bit_of(*chunk, slot) : 0;
  if (chunk == nullptr || (chunk->in_use & bit) == 0) {
    internal_error("a stack was returned twice, or to the pool of another OS thread");
  }
  chunk->in_use &= ~bit;
  --c->in_use;
  c->free.push_back(slot);
}

void PooledStack::run_ended() noexcept {
  for (SizeClass& c : tl_pool.classes()) {
    c.trim((c.peak + kPerChunk - 1) / kPerChunk);
    c.peak = c.in_use;
  }
}

PooledStack::Stats PooledStack::stats() noexcept {
  Stats s;
  for (const SizeClass& c : tl_pool.classes()) {
    s.stacks += c.chunks.size() * kPerChunk;
    s.in_use += c.in_use;
    s.chunks += c.chunks.size();
  }
  return s;
}

PooledStack::GuardKind PooledStack::guard_kind() noexcept {
  const int kind = g_guard_kind.load(std::memory_order_relaxed);
  return kind == static_cast<int>(GuardKind::mprotect) + 1 ? GuardKind::mprotect
                                                           : GuardKind::marker;
}

}  // namespace bubble::detail
