#pragma once

// The pool's queue: jobs grouped by priority level and tenant, with aging computed when a job is
// taken. Private to bubble::pool; guarded by the pool's mutex (no synchronisation of its own).
//
// Structure. A *lane* is the FIFO of one tenant's jobs at one priority. A *level* holds the
// non-empty lanes of one priority in a circular list (the round-robin ring): take() serves the
// lane at the ring's cursor and moves the cursor past it; a lane that becomes non-empty joins the
// ring just before the cursor (last in the current round). Levels with queued jobs are kept in a
// vector sorted by decreasing priority. Jobs live in nodes drawn from a free list that grows in
// chunks and never shrinks, so the steady state allocates nothing; at most `capacity` nodes are
// ever live, so memory is bounded by the peak queue depth.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <bubble/context.hpp>
#include <bubble/pool/job.hpp>
#include <bubble/pool/job_outcome.hpp>
#include <bubble/time.hpp>

namespace bubble::detail {

struct PoolTenant;

// One queued job.
struct PoolItem {
  Job job;
  // The submitter's context, only when it can end (a background submitter needs none: the job
  // then runs with the pool's own context).
  std::optional<Context> ctx;
  std::function<void(const JobOutcome&)> on_complete;
  std::optional<Duration> expected_duration;
  TimePoint enqueued{};
  std::uint64_t seq = 0;
  PoolTenant* tenant = nullptr;
};

struct PoolNode {
  PoolItem item;
  PoolNode* next = nullptr;
  // While the node waits in the pool's inbox (pool_inbox.hpp): the priority and the tenant's
  // name, which the worker that moves it into the queue resolves to a PoolTenant.
  int priority = 0;
  std::string tenant_name;
  bool from_inbox =
      false;  // Drawn from the inbox's nodes (and given back there), not this queue's.
};

struct PoolLane {
  PoolTenant* tenant = nullptr;
  int priority = 0;
  PoolNode* head = nullptr;
  PoolNode* tail = nullptr;
  // Links of the level's round-robin ring; valid while active.
  PoolLane* ring_next = nullptr;
  PoolLane* ring_prev = nullptr;
  bool active = false;
};

struct PoolTenant {
  // The counts first: every job changes them, and the queue keeps its default tenant's on the
  // line of its own counts (see PoolQueue's members).
  std::size_t queued = 0;
  int running = 0;
  std::vector<std::unique_ptr<PoolLane>> lanes;  // One per priority used; few.
  std::string name;

  PoolLane& lane(int priority) {
    for (auto& l : lanes) {
      if (l->priority == priority) return *l;
    }
    auto l = std::make_unique<PoolLane>();
    l->tenant = this;
    l->priority = priority;
    lanes.push_back(std::move(l));
    return *lanes.back();
  }
};

class PoolQueue {
 public:
  PoolQueue() { default_tenant_.name = ""; }
  PoolQueue(const PoolQueue&) = delete;
  PoolQueue& operator=(const PoolQueue&) = delete;
  ~PoolQueue() = default;  // Queued items, if any, are destroyed with their chunks.

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // The tenant record for `name`, or nullptr if it has none (no queued or running jobs).
  PoolTenant* find_tenant(const std::string& name) noexcept {
    if (name.empty()) return &default_tenant_;
    auto it = tenants_.find(name);
    return it == tenants_.end() ? nullptr : it->second.get();
  }

  PoolTenant& tenant(const std::string& name) {
    if (name.empty()) return default_tenant_;
    auto& slot = tenants_[name];
    if (slot == nullptr) {
      slot = std::make_unique<PoolTenant>();
      slot->name = name;
    }
    return *slot;
  }

  // Forgets a named tenant that has nothing queued or running, so that many short-lived tenants
  // do not accumulate.
  void release_tenant(PoolTenant& t) {
    if (&t == &default_tenant_ || t.queued != 0 || t.running != 0) return;
    tenants_.erase(t.name);
  }

  // A free node for the caller to fill (every field of its item must be assigned) and pass to
  // push(). Nodes come from a free list that grows in chunks and never shrinks.
  PoolNode* allocate() {
    if (free_ == nullptr) {
      constexpr std::size_t kChunk = 32;
      chunks_.push_back(std::make_unique<PoolNode[]>(kChunk));
      PoolNode* chunk = chunks_.back().get();
      for (std::size_t i = 0; i < kChunk; ++i) {
        chunk[i].next = free_;
        free_ = &chunk[i];
      }
    }
    PoolNode* node = free_;
    free_ = node->next;
    return node;
  }

  // Returns a node taken by take() to the free list. Its item must hold no resources any more
  // (job and context reset, callback moved out).
  void release(PoolNode* node) noexcept {
    node->next = free_;
    free_ = node;
  }

  // Appends a filled node to its tenant's lane at `priority`.
  void push(PoolNode* node, int priority) {
    node->next = nullptr;
    PoolTenant& t = *node->item.tenant;
    PoolLane& lane = t.lane(priority);
    if (lane.tail == nullptr) {
      lane.head = lane.tail = node;
    } else {
      lane.tail->next = node;
      lane.tail = node;
    }
    if (!lane.active) activate(lane);
    ++t.queued;
    ++size_;
  }

  // Takes the next job per the pool's rules (see <bubble/pool/pool.hpp>) and returns its node (to
  // release() once done with), or nullptr if no queued job is eligible (queue empty, or every
  // tenant with queued jobs is at `running_cap`, 0: none). `now` is the time at which the job is
  // taken (for aging); `aging_step` 0 disables aging.
  PoolNode* take(TimePoint now, Duration aging_step, int running_cap) {
    PoolLane* best_lane = nullptr;
    std::int64_t best_eff = 0;
    std::uint64_t best_seq = 0;
    for (Level& level : levels_) {
      PoolLane* lane = first_eligible(level, running_cap);
      if (lane == nullptr) continue;
      if (aging_step <= Duration::zero() || levels_.size() == 1) {
        best_lane = lane;
        break;
      }
      // The level's oldest eligible job decides its effective priority.
      const PoolNode* oldest = nullptr;
      PoolLane* l = lane;
      do {
        if (eligible(*l, running_cap) &&
            (oldest == nullptr || l->head->item.seq < oldest->item.seq)) {
          oldest = l->head;
        }
        l = l->ring_next;
      } while (l != level.cursor);
      const Duration waited = now - oldest->item.enqueued;
      const std::int64_t eff =
          static_cast<std::int64_t>(level.priority) +
          (waited > Duration::zero() ? static_cast<std::int64_t>(waited / aging_step) : 0);
      if (best_lane == nullptr || eff > best_eff ||
          (eff == best_eff && oldest->item.seq < best_seq)) {
        best_lane = lane;
        best_eff = eff;
        best_seq = oldest->item.seq;
      }
    }
    if (best_lane == nullptr) return nullptr;
    PoolLane& lane = *best_lane;
    PoolNode* node = lane.head;
    lane.head = node->next;
    if (lane.head == nullptr) lane.tail = nullptr;
    Level& level = level_of(lane.priority);
    // Written only when it moves: with one lane in the level it does not, and the level's line
    // then stays shared between the workers instead of moving to each one that takes a job.
    if (level.cursor != lane.ring_next) level.cursor = lane.ring_next;
    if (lane.head == nullptr) deactivate(level, lane);
    --node->item.tenant->queued;
    --size_;
    return node;
  }

 private:
  struct Level {
    int priority = 0;
    PoolLane* cursor = nullptr;  // Next lane to serve; the ring's "first".
    std::size_t lanes = 0;
  };

  static bool eligible(const PoolLane& lane, int running_cap) noexcept {
    return running_cap <= 0 || lane.tenant->running < running_cap;
  }

  static PoolLane* first_eligible(Level& level, int running_cap) noexcept {
    PoolLane* l = level.cursor;
    if (running_cap <= 0) return l;
    for (std::size_t i = 0; i < level.lanes; ++i, l = l->ring_next) {
      if (eligible(*l, running_cap)) {
        level.cursor = l;  // Skipped lanes keep their turn for the next round.
        return l;
      }
    }
    return nullptr;
  }

  Level& level_of(int priority) {
    auto it = std::lower_bound(levels_.begin(), levels_.end(), priority,
                               [](const Level& l, int p) { return l.priority > p; });
    if (it == levels_.end() || it->priority != priority) {
      it = levels_.insert(it, Level{priority, nullptr, 0});
    }
    return *it;
  }

  void activate(PoolLane& lane) {
    Level& level = level_of(lane.priority);
    if (level.cursor == nullptr) {
      lane.ring_next = lane.ring_prev = &lane;
      level.cursor = &lane;
    } else {
      // Last in the current round: just before the cursor.
      PoolLane* first = level.cursor;
      PoolLane* last = first->ring_prev;
      lane.ring_prev = last;
      lane.ring_next = first;
      last->ring_next = &lane;
      first->ring_prev = &lane;
    }
    ++level.lanes;
    lane.active = true;
  }

  void deactivate(Level& level, PoolLane& lane) {
    if (lane.ring_next == &lane) {
      level.cursor = nullptr;
    } else {
      lane.ring_prev->ring_next = lane.ring_next;
      lane.ring_next->ring_prev = lane.ring_prev;
      if (level.cursor == &lane) level.cursor = lane.ring_next;
    }
    lane.ring_next = lane.ring_prev = nullptr;
    lane.active = false;
    if (--level.lanes == 0) {
      const int priority = level.priority;
      levels_.erase(std::find_if(levels_.begin(), levels_.end(),
                                 [priority](const Level& l) { return l.priority == priority; }));
    }
  }

  // What a take reads but rarely changes, apart from what every job changes: a worker that takes
  // a job after the other one did then finds these lines still in its cache.
  std::vector<Level> levels_;
  std::unordered_map<std::string, std::unique_ptr<PoolTenant>> tenants_;
  std::vector<std::unique_ptr<PoolNode[]>> chunks_;
  // What every job changes, together on one line: the size, the free list, then the default
  // tenant's counts (its first members).
  alignas(64) std::size_t size_ = 0;
  PoolNode* free_ = nullptr;
  PoolTenant default_tenant_;
};

}  // namespace bubble::detail
