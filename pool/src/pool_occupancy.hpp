#pragma once

// How many of a pool's queue slots are taken: the count its capacity bounds. Private to
// bubble::pool.
//
// Two counters on cache lines of their own: admissions (jobs queued by the locked path, pushed to
// the inbox, or a slot reserved for a push on its way), raised by submitters, and takes, written
// only by the holder of the pool's mutex (a plain store, no read-modify-write, on the workers'
// path). The occupancy is their difference; under the mutex it is exact but for reservations on
// their way to the inbox, and equals the queue's size whenever the inbox is off.
//
// The capacity bound. The locked path checks occupied() < capacity under the mutex and then
// calls admit(); reserve() (without the mutex) never takes the last slot. So while the locked
// path is between its check and its admit(), reservations cannot raise the occupancy to the
// capacity, and the two together never exceed it. A stale count of takes only overstates the
// occupancy (takes only lower it), so the bound holds with any earlier value of the takes: the
// submitters keep the last one read next to the admissions, and read the takes themselves (a line
// the workers write at every take) only when the kept value leaves no room or an exact depth is
// wanted. The takes are read with acquire, and a take() releases: every admission a take counts
// happened before it, so the admissions, read next, are at least the takes read.

#include <atomic>
#include <cstddef>
#include <string>

#include <bubble/atomic.hpp>

namespace bubble::detail {

class PoolOccupancy {
 public:
  // The counts of a pool of `capacity` slots; `name` prefixes the names of its atomics in a
  // bubble's traces.
  PoolOccupancy(std::size_t capacity, const std::string& name)
      : capacity_(capacity),
        admitted_(name + ".admitted", 0),
        taken_seen_(name + ".taken_seen", 0),
        taken_(name + ".taken", 0) {}
  PoolOccupancy(const PoolOccupancy&) = delete;
  PoolOccupancy& operator=(const PoolOccupancy&) = delete;

  // The occupancy. Exact with the mutex held, but for reservations on their way.
  std::size_t occupied() const noexcept {
    const std::size_t taken = taken_.load(std::memory_order_relaxed);
    return admitted_.load(std::memory_order_relaxed) - taken;
  }

  // A job queued by the locked path (mutex held, after checking occupied() < capacity).
  void admit() noexcept { admitted_.fetch_add(1, std::memory_order_relaxed); }

  // A job taken from the queue (mutex held).
  void take() noexcept {
    taken_.store(taken_.unsync_load() + 1, std::memory_order_release);  // The only writer.
  }

  // Reserves a slot for a push to the inbox, unless it would be the last one (or the occupancy is
  // not known to leave room). Any thread, without the mutex; never blocks. Returns the occupancy
  // with the reserved slot (exact when `exact_depth`: the takes are then read afresh), or 0 when
  // no slot was reserved.
  std::size_t reserve(bool exact_depth) noexcept {
    std::size_t taken = taken_seen_.load(std::memory_order_relaxed);
    std::size_t n = admitted_.load(std::memory_order_relaxed);
    if (exact_depth || !room(n, taken)) {
      taken = taken_.load(std::memory_order_acquire);
      taken_seen_.store(taken, std::memory_order_relaxed);
      n = admitted_.load(std::memory_order_relaxed);
    }
    do {
      if (!room(n, taken)) return 0;
    } while (!admitted_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return n + 1 - taken;
  }

  // Gives back a slot reserve() reserved, for a push that failed.
  void unreserve() noexcept { admitted_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  // Whether `admitted` - `taken` leaves two free slots or more.
  bool room(std::size_t admitted, std::size_t taken) const noexcept {
    return admitted >= taken && admitted - taken + 2 <= capacity_;
  }

  const std::size_t capacity_;
  alignas(64) Atomic<std::size_t> admitted_;
  Atomic<std::size_t> taken_seen_;  // An earlier value of taken_ (see reserve()).
  alignas(64) Atomic<std::size_t> taken_;
};

}  // namespace bubble::detail
