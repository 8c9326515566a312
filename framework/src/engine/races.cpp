// Race detection in a bubble: vector clocks and the shadow of plain accesses (engine/races.hpp).

#include "engine/races.hpp"

#include <algorithm>
#include <functional>

namespace bubble::engine {

void VectorClock::join(const VectorClock& o) {
  if (o.c_.size() > c_.size()) c_.resize(o.c_.size(), 0);
  for (std::size_t i = 0; i < o.c_.size(); ++i) c_[i] = std::max(c_[i], o.c_[i]);
}

std::size_t StackTree::KeyHash::operator()(const Key& k) const noexcept {
  return std::hash<const void*>{}(k.pc) * 31 + k.parent;
}

std::uint32_t StackTree::enter(std::uint32_t parent, const void* pc) {
  const auto [it, inserted] =
      index_.try_emplace(Key{parent, pc}, static_cast<std::uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back(Node{parent, pc});
  return it->second;
}

std::vector<const void*> StackTree::addresses(std::uint32_t node) const {
  std::vector<const void*> out;
  for (; node != 0; node = nodes_[node].parent) out.push_back(nodes_[node].pc);
  return out;
}

RaceDetector::RaceDetector() {
  threads_.resize(1);
  threads_[0].clock.set(0, 1);
}

RaceDetector::~RaceDetector() = default;

RaceDetector::ThreadClocks& RaceDetector::thread(std::uint32_t t) {
  if (t >= threads_.size()) threads_.resize(t + 1);
  return threads_[t];
}

void RaceDetector::add_thread(std::uint32_t t, std::string name) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  th.clock.set(t, 1);
  th.name = std::move(name);
}

void RaceDetector::spawned(std::uint32_t parent, std::uint32_t child, std::string name) {
  const Busy busy(busy_);
  thread(std::max(parent, child));  // May move threads_: take references after it.
  ThreadClocks& p = threads_[parent];
  ThreadClocks& c = threads_[child];
  c.clock = p.clock;
  c.clock.set(child, 1);
  c.stack = 0;
  c.name = std::move(name);
  p.clock.tick(parent);
}

const std::string& RaceDetector::name(std::uint32_t t) const noexcept {
  static const std::string none;
  return t < threads_.size() ? threads_[t].name : none;
}

void RaceDetector::exited(std::uint32_t t) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  th.final_clock = th.clock;
}

void RaceDetector::joined(std::uint32_t joiner, std::uint32_t joined) {
  const Busy busy(busy_);
  thread(std::max(joiner, joined));
  threads_[joiner].clock.join(threads_[joined].final_clock);
}

void RaceDetector::woke(std::uint32_t waker, std::uint32_t woken) {
  const Busy busy(busy_);
  thread(std::max(waker, woken));
  threads_[woken].clock.join(threads_[waker].clock);
  threads_[waker].clock.tick(waker);
}

void RaceDetector::waited(std::uint32_t t) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    if (i != t) th.clock.join(threads_[i].clock);
  }
}

void RaceDetector::timer_scheduled(std::uint32_t t, TimerId id) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  timers_.insert_or_assign(id, th.clock);
  th.clock.tick(t);
}

void RaceDetector::timer_fired(TimerId id) {
  const Busy busy(busy_);
  const auto it = timers_.find(id);
  if (it == timers_.end()) return;
  // The callback starts from the scheduling thread's clock, with a tick of the scheduler's own
  // that no earlier callback had, so that its accesses are not taken for theirs.
  ThreadClocks& scheduler = threads_[0];
  const std::uint32_t next = scheduler.clock.get(0) + 1;
  scheduler.clock = std::move(it->second);
  scheduler.clock.set(0, std::max(next, scheduler.clock.get(0) + 1));
  timers_.erase(it);
}

void RaceDetector::timer_cancelled(TimerId id) noexcept {
  timers_.erase(id);
}

void RaceDetector::release(std::uint32_t t, std::uint64_t id) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  objects_[id].join(th.clock);
  th.clock.tick(t);
}

void RaceDetector::acquire(std::uint32_t t, std::uint64_t id) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  const auto it = objects_.find(id);
  if (it != objects_.end()) th.clock.join(it->second);
}

namespace {

bool acquires(std::memory_order o) noexcept {
  return o == std::memory_order_consume || o == std::memory_order_acquire ||
         o == std::memory_order_acq_rel || o == std::memory_order_seq_cst;
}
bool releases(std::memory_order o) noexcept {
  return o == std::memory_order_release || o == std::memory_order_acq_rel ||
         o == std::memory_order_seq_cst;
}

}  // namespace

void RaceDetector::atomic(std::uint32_t t, const void* address, detail::AtomicOp op,
                          std::memory_order order) {
  const Busy busy(busy_);
  using detail::AtomicOp;
  ThreadClocks& th = thread(t);
  if (op == AtomicOp::thread_fence) {
    if (acquires(order)) th.clock.join(th.loaded_relaxed);
    if (releases(order)) {
      th.released_by_fence = th.clock;
      th.fenced = true;
      th.clock.tick(t);
    }
    return;
  }
  if (op == AtomicOp::notify_one || op == AtomicOp::notify_all) return;
  VectorClock& clock = atomics_[address];
  const bool reads = op != AtomicOp::store;
  const bool writes = op != AtomicOp::load && op != AtomicOp::wait;
  if (reads) {
    if (acquires(order)) {
      th.clock.join(clock);
    } else {
      th.loaded_relaxed.join(clock);
    }
  }
  if (!writes) return;
  const bool rmw = reads;
  if (releases(order)) {
    if (rmw) {
      clock.join(th.clock);
    } else {
      clock = th.clock;
    }
    th.clock.tick(t);
  } else if (th.fenced) {
    // A relaxed write after a release fence: the fence synchronizes through it.
    if (rmw) {
      clock.join(th.released_by_fence);
    } else {
      clock = th.released_by_fence;
    }
  } else if (!rmw) {
    clock.clear();  // A relaxed store ends every release sequence headed before it.
  }
}

void RaceDetector::cas_outcome(std::uint32_t t, const void* address, bool exchanged,
                               std::memory_order success, std::memory_order failure) {
  if (exchanged) {
    atomic(t, address, detail::AtomicOp::exchange, success);
  } else {
    atomic(t, address, detail::AtomicOp::load, failure);
  }
}

void RaceDetector::atomic_forgotten(const void* address) noexcept {
  atomics_.erase(address);
}

RaceDetector::Cell& RaceDetector::cell(std::uintptr_t granule) {
  constexpr std::size_t kCells = kPageBytes / kGranule;
  const std::uintptr_t page = granule / kCells;
  if (page != last_page_) {
    std::unique_ptr<Page>& p = pages_[page];
    if (!p) p = std::make_unique<Page>();
    last_page_ = page;
    last_page_cells_ = p.get();
  }
  return last_page_cells_->cells[granule % kCells];
}

std::optional<Race> RaceDetector::access(std::uint32_t t, const void* address, std::size_t size,
                                         bool write, const void* pc) {
  const Busy busy(busy_);
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  if (size == 0 || (begin >= ignored_begin_ && begin < ignored_end_)) return std::nullopt;
  ThreadClocks& th = thread(t);
  const std::uintptr_t end = begin + size;
  for (std::uintptr_t g = begin / kGranule; g * kGranule < end; ++g) {
    const std::uintptr_t lo = std::max(begin, g * kGranule);
    const std::uintptr_t hi = std::min(end, (g + 1) * kGranule);
    const auto mask = static_cast<std::uint8_t>(((1u << (hi - lo)) - 1u) << (lo - g * kGranule));
    if (std::optional<Race> race = access_granule(t, th, g, mask, size, write, pc, address)) {
      return race;
    }
  }
  return std::nullopt;
}

std::optional<Race> RaceDetector::access_granule(std::uint32_t t, ThreadClocks& th,
                                                 std::uintptr_t granule, std::uint8_t mask,
                                                 std::size_t size, bool write, const void* pc,
                                                 const void* address) {
  Cell& c = cell(granule);
  const Access now{t, th.clock.get(t), th.stack, mask, write, static_cast<std::uint8_t>(size), pc};
  for (const Access& a : c.accesses) {
    if ((a.mask & mask) != 0 && a.thread != t && (a.write || write) &&
        !happens_before(a, th.clock)) {
      return Race{address, now, a};
    }
  }
  // Accesses that happen before this one give up the bytes it covers; then it takes a free slot,
  // or the oldest one's.
  Access* free = nullptr;
  for (Access& a : c.accesses) {
    if (a.mask != 0 && (write || !a.write) && happens_before(a, th.clock)) {
      a.mask = static_cast<std::uint8_t>(a.mask & ~mask);
    }
    if (a.mask == 0 && free == nullptr) free = &a;
  }
  if (free == nullptr) {
    std::move(c.accesses.begin() + 1, c.accesses.end(), c.accesses.begin());
    free = &c.accesses.back();
  }
  *free = now;
  return std::nullopt;
}

void RaceDetector::forget(const void* address, std::size_t size) {
  if (busy_) return;  // The detector's own allocation.
  const Busy busy(busy_);
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t end = begin + size;
  constexpr std::size_t kCells = kPageBytes / kGranule;
  for (std::uintptr_t g = begin / kGranule; g * kGranule < end;) {
    const std::uintptr_t page = g / kCells;
    const auto it = pages_.find(page);
    const std::uintptr_t page_end = (page + 1) * kCells;
    if (it != pages_.end()) {
      if (g == page * kCells && page_end * kGranule <= end) {
        if (last_page_ == page) last_page_ = ~std::uintptr_t{0};
        pages_.erase(it);
      } else {
        for (std::uintptr_t x = g; x < page_end && x * kGranule < end; ++x) {
          it->second->cells[x % kCells] = Cell{};
        }
      }
    }
    g = page_end;
  }
}

void RaceDetector::ignore(const void* begin, const void* end) noexcept {
  ignored_begin_ = reinterpret_cast<std::uintptr_t>(begin);
  ignored_end_ = reinterpret_cast<std::uintptr_t>(end);
}

void RaceDetector::function_entered(std::uint32_t t, const void* pc) {
  const Busy busy(busy_);
  ThreadClocks& th = thread(t);
  th.stack = stacks_.enter(th.stack, pc);
}

void RaceDetector::function_exited(std::uint32_t t) noexcept {
  if (t >= threads_.size()) return;
  ThreadClocks& th = threads_[t];
  th.stack = stacks_.parent(th.stack);
}

}  // namespace bubble::engine
