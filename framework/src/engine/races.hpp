#pragma once

// Race detection in a bubble: the happens-before relation of a run, kept with vector clocks
// (L. Lamport's clocks, as in DJIT+ and FastTrack), and the last accesses to every 8-byte granule
// of memory that code compiled with bubble::instrument reads or writes. Private to the engine.
//
// Threads are numbered by their bubble thread id; number 0 is the scheduler, where timer callbacks
// run (its clock is that of the thread that scheduled the firing timer). A thread's clock ticks
// after every release it performs, so that the accesses it makes afterwards are not covered by
// that release.
//
// What synchronizes (the engine and the primitives report it):
//   - spawn: the child starts with the parent's clock; join: the joiner acquires the joined
//     thread's final clock; unpark: the woken thread acquires the waker's clock (a wake-up is
//     always an edge, so a primitive written on the kernel needs nothing more);
//   - a primitive's release (unlock, send, notify, done, post, count_down, cancel) and acquire
//     (lock, receive, wait): the object's clock, keyed by its object id;
//   - an atomic operation, by its memory order, keyed by its address: a release store replaces the
//     atomic's clock, a relaxed read-modify-write keeps it (release sequences), a relaxed store
//     clears it; an acquire load joins it; fences as in the C++ memory model (a release fence
//     lends its clock to later relaxed stores, an acquire fence takes the clocks of earlier relaxed
//     loads);
//   - a timer callback inherits the clock of the thread that scheduled it; bubble::wait() returns
//     with every thread's clock (what the others did before they blocked happens before it).
//
// Plain accesses: each 8-byte granule keeps up to four recorded accesses, each with its thread, the
// thread's clock at the access, the bytes it touched, whether it wrote, and its address and call
// stack. An access races with a recorded one of another thread that touched a common byte, when at
// least one of them writes and the recorded one does not happen before it. A recorded access that
// happens before a new one loses the bytes the new one covers (a write covers reads and writes, a
// read covers reads), since any later access that races with it races with the new one too. A
// fifth access evicts the oldest (a race with the evicted one can be missed); the first race fails
// the run. Memory that is fresh (a new allocation, a new thread's stack) forgets its history.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <bubble/detail/atomic_hooks.hpp>
#include <bubble/runtime.hpp>

namespace bubble::engine {

// A vector clock: component t is the last tick of thread t known here (0 when none).
class VectorClock {
 public:
  std::uint32_t get(std::uint32_t t) const noexcept { return t < c_.size() ? c_[t] : 0; }
  void set(std::uint32_t t, std::uint32_t v) {
    if (t >= c_.size()) c_.resize(t + 1, 0);
    c_[t] = v;
  }
  void tick(std::uint32_t t) { set(t, get(t) + 1); }
  void join(const VectorClock& o);
  void clear() noexcept { c_.clear(); }
  bool empty() const noexcept { return c_.empty(); }

 private:
  std::vector<std::uint32_t> c_;
};

// Call stacks as nodes of a tree: a node is a return address under its parent node (0: the root,
// no frame). A thread's current stack is one node; the stacks of recorded accesses are nodes too,
// so that recording one costs a number, not a copy.
class StackTree {
 public:
  StackTree() : nodes_(1) {}
  std::uint32_t enter(std::uint32_t parent, const void* pc);
  std::uint32_t parent(std::uint32_t node) const noexcept { return nodes_[node].parent; }
  // The addresses of `node`'s stack, innermost first.
  std::vector<const void*> addresses(std::uint32_t node) const;

 private:
  struct Node {
    std::uint32_t parent = 0;
    const void* pc = nullptr;
  };
  struct Key {
    std::uint32_t parent;
    const void* pc;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  std::vector<Node> nodes_;
  std::unordered_map<Key, std::uint32_t, KeyHash> index_;
};

// One recorded plain access.
struct Access {
  std::uint32_t thread = 0;  // 0 with mask 0: no access
  std::uint32_t clock = 0;   // The thread's own clock component at the access.
  std::uint32_t stack = 0;   // Its call stack (StackTree), without the access itself.
  std::uint8_t mask = 0;     // The bytes of the granule it touched.
  bool write = false;
  std::uint8_t size = 0;  // The size of the whole access, as the instrumentation gave it.
  const void* pc = nullptr;
};

// The two accesses of a race: `current` is the one that found `previous` unordered with it.
struct Race {
  const void* address = nullptr;  // Of the current access.
  Access current;
  Access previous;
};

class RaceDetector {
 public:
  RaceDetector();
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  // A thread that exists when the detector starts: its clock starts at 1.
  void add_thread(std::uint32_t t, std::string name);
  void spawned(std::uint32_t parent, std::uint32_t child, std::string name);
  // The name of thread `t` (kept after it exits, for reports): "" for the scheduler.
  const std::string& name(std::uint32_t t) const noexcept;
  void exited(std::uint32_t t);
  void joined(std::uint32_t joiner, std::uint32_t joined);
  void woke(std::uint32_t waker, std::uint32_t woken);
  // bubble::wait() returned to `t`: it acquires every thread's clock.
  void waited(std::uint32_t t);

  // Timers: scheduling one from `t` keeps its clock for the callback; firing one makes the
  // scheduler's clock that one. Cancelling forgets it.
  void timer_scheduled(std::uint32_t t, TimerId id);
  void timer_fired(TimerId id);
  void timer_cancelled(TimerId id) noexcept;

  // A primitive's release and acquire of object `id`.
  void release(std::uint32_t t, std::uint64_t id);
  void acquire(std::uint32_t t, std::uint64_t id);

  // An atomic operation on `address` (nullptr for a fence) by `t`; a compare-exchange's ordering
  // is applied once its outcome is known (cas_outcome).
  void atomic(std::uint32_t t, const void* address, detail::AtomicOp op, std::memory_order order);
  void cas_outcome(std::uint32_t t, const void* address, bool exchanged, std::memory_order success,
                   std::memory_order failure);
  void atomic_forgotten(const void* address) noexcept;

  // A plain access of `size` bytes at `address` by `t`; the first race it finds, if any.
  std::optional<Race> access(std::uint32_t t, const void* address, std::size_t size, bool write,
                             const void* pc);
  // Memory that is new: its recorded accesses are forgotten.
  void forget(const void* address, std::size_t size);
  // Ignores accesses in [begin, end) (the static thread-local storage the fibers of a run share).
  void ignore(const void* begin, const void* end) noexcept;

  // Shadow call stacks.
  void function_entered(std::uint32_t t, const void* pc);
  void function_exited(std::uint32_t t) noexcept;
  const StackTree& stacks() const noexcept { return stacks_; }

 private:
  struct ThreadClocks {
    VectorClock clock;
    VectorClock released_by_fence;  // The clock at the last release fence.
    bool fenced = false;            // A release fence was made.
    VectorClock loaded_relaxed;     // Clocks of relaxed loads, for a later acquire fence.
    VectorClock final_clock;        // Set when the thread exits.
    std::uint32_t stack = 0;        // The current call stack (StackTree node).
    std::string name;
  };
  struct Cell {
    std::array<Access, 4> accesses;  // Oldest first; empty ones have mask 0.
  };
  static constexpr std::size_t kPageBytes = 4096;
  static constexpr std::size_t kGranule = 8;
  struct Page {
    std::array<Cell, kPageBytes / kGranule> cells;
  };

  ThreadClocks& thread(std::uint32_t t);
  void release_clock(ThreadClocks& th, std::uint32_t t, VectorClock& into, bool replace);
  bool happens_before(const Access& a, const VectorClock& now) const noexcept {
    return a.clock <= now.get(a.thread);
  }
  std::optional<Race> access_granule(std::uint32_t t, ThreadClocks& th, std::uintptr_t granule,
                                     std::uint8_t mask, std::size_t size, bool write,
                                     const void* pc, const void* address);
  Cell& cell(std::uintptr_t granule);

  // Set while a member that may allocate runs: an allocation is reported as fresh memory
  // (forget) by the allocation hooks, which must not change the detector's maps in the middle
  // of an insertion.
  struct Busy {
    explicit Busy(bool& flag) noexcept : flag_(flag), saved_(flag) { flag_ = true; }
    ~Busy() { flag_ = saved_; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
    bool& flag_;
    bool saved_;
  };
  bool busy_ = false;

  std::vector<ThreadClocks> threads_;
  std::unordered_map<std::uint64_t, VectorClock> objects_;
  std::unordered_map<const void*, VectorClock> atomics_;
  std::unordered_map<TimerId, VectorClock> timers_;
  std::unordered_map<std::uintptr_t, std::unique_ptr<Page>> pages_;
  std::uintptr_t last_page_ = ~std::uintptr_t{0};
  Page* last_page_cells_ = nullptr;
  std::uintptr_t ignored_begin_ = 0;
  std::uintptr_t ignored_end_ = 0;
  StackTree stacks_;
};

}  // namespace bubble::engine
