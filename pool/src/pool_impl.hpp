#pragma once

// Pool::Impl, the worker pool's state and the rules that keep it, shared by the three files that
// implement it: pool.cpp (construction, start, shutdown, stats and the public Pool members),
// pool_admission.cpp (submit: the locked path and the inbox) and pool_worker.cpp (the workers'
// loop and the running of a job). Private to bubble::pool; see <bubble/pool/pool.hpp> for the
// contract. Helpers called on every job from more than one of those files are defined here, inline.
//
// One bubble::Mutex guards everything but the inbox and the occupancy counts (lock-free, see
// "The inbox" below): the queue (pool_queue.hpp), the counters and histograms, the flags and the
// worker/waiter counts. CondVars hang off it: one per worker, where it waits
// while idle (pool_idle_workers.hpp; worker 0's is work_cv_), room_cv_ (submitters wait for room)
// and stopped_cv_ (shutdown waits for the workers to stop).
//
// Idle workers are woken last in, first out (pool_idle_workers.hpp): a job queued while a worker
// is idle wakes the one that went idle last. With one CondVar for all the idle workers the notify
// went to the longest-idle one, which more often found the queue already emptied by another worker
// (pool_bench's BM_BubblePool/busy:0/measure_latency:1, counted by tools/bench/pool_counts.py).
// Waiting submitters are resumed one at a time: a worker that leaves room_to_resume free slots
// wakes one (room_resuming_ says one is on its way), and each resumed submitter wakes the next
// while room remains. A worker's loop takes the lock once per job in the steady state: the critical
// section that accounts for the previous job also takes the next one. Jobs, their contexts and
// their completion callbacks run, and are destroyed, outside the lock.
//
// Clock reads (PoolOptions::measure_latency, or aging): one per submit, outside the lock (the
// moment queued), and one per job in a worker's steady state, after the job and before the lock:
// that single reading is the end of the job just run and the moment the next job is taken, so
// exact latency figures cost two reads per job. A worker reads again only after it waited for
// work, after on_complete or sink callbacks (their time belongs to neither job), and a submitter
// after it waited for room.
//
// The inbox (pool_inbox.hpp). A submit that finds the pool open, no idle worker to wake and more
// than one free slot pushes its job onto a lock-free ring instead of taking the mutex: with one
// mutex crossed by every job twice, the submitter spent most of its time waiting for the workers'
// critical sections (pool_bench's BM_BubblePool/busy:0 against BM_AsioThreadPool/busy:0).
// Whoever holds the mutex moves the inbox's jobs into the queue, in the order of their pushes,
// before it reads the queue or the counters (a worker before every take, a locked submit before it
// queues, stats(), shutdown as it closes): numbered, counted and placed exactly as if each had been
// queued at its push, so priority, aging, tenant round robin, FIFO order and the counters are
// unchanged. The locked path decides whenever the fast one cannot: an idle worker must be woken,
// the queue is one slot from full, the inbox's ring is full (a capacity above its 4,096 slots), a
// tenant cap is set (max_queued_per_tenant), the pool is closed (shutdown marks the inbox closed
// under the mutex, together with closed_: a later push fails and its submit is refused by the
// locked path; what was pushed before is queued and run). A worker going idle is counted before it
// looks at the inbox a last time, and a pusher looks at that count after its push (both
// sequentially consistent): either the worker sees the job, or the pusher wakes a worker under the
// mutex. How the capacity holds: pool_occupancy.hpp.
//
// The inbox runs in bubbles as on real threads: the inbox's fields, the occupancy counts and the
// idle count are bubble::Atomic, so in a bubble every operation on them is a scheduling point and
// the scenario suites explore their interleavings; tests/pool/system/pool_inbox_test.cpp also
// runs them on real threads, under ThreadSanitizer in CI.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <bubble/cond_var.hpp>
#include <bubble/mutex.hpp>
#include <bubble/pool/latency_histogram.hpp>
#include <bubble/pool/pool.hpp>

#include "pool_idle_workers.hpp"
#include "pool_inbox.hpp"
#include "pool_occupancy.hpp"
#include "pool_queue.hpp"

namespace bubble {

class Pool::Impl {
 public:
  // How a submit waits for room: submit (until its context ends), try_submit (not at all),
  // submit_within (at most max_wait).
  enum class Admission { wait, try_once, bounded };

  Impl(Runtime& rt, PoolOptions options);
  void start();
  // Shutdown with an already-expired deadline, then join the threads.
  void stop_now();
  std::error_code submit(const Context& ctx, Job& job, JobOptions& opts, Admission mode,
                         Duration max_wait, SourceLocation where);
  // Shutdown; `ctx` null means a deadline that has already passed.
  std::error_code shutdown(const Context* ctx, SourceLocation where);
  PoolStats stats() const;

  Runtime& rt_;
  const PoolOptions opts_;
  // Free slots a full queue needs before a waiting submitter is resumed (PoolOptions).
  const std::size_t room_to_resume_;

 private:
  std::error_code admit(const Context& ctx, Job& job, JobOptions& opts, Admission mode,
                        Duration max_wait, SourceLocation where, std::size_t& depth);

  // The submit without the mutex (see "The inbox" at the top of this file).
  // Returns true when the job is in the inbox (depth: the jobs queued with it), false, with
  // `job` and `opts` as they came, when the locked path must decide.
  // Inline, like the workers' per-job functions below, though defined in a .cpp file: each is
  // called only from the file that defines it, once per job, and stays inlined into its caller.
  inline bool admit_to_inbox(const Context& ctx, Job& job, JobOptions& opts, TimePoint now,
                             SourceLocation where, std::size_t& depth);

  // Moves the inbox's jobs into the queue, in the order of their pushes: numbered and counted as
  // if each had been queued by the locked path at its push. Called with the mutex held before
  // anything reads the queue or the counters.
  void drain_inbox_locked() {
    if (inbox_on_) inbox_.take_all([this](detail::PoolNode* node) { queue_pushed_locked(node); });
  }

  // Queues a node taken from the inbox, as the locked path would have queued it at its push.
  void queue_pushed_locked(detail::PoolNode* node) {
    node->item.seq = ++seq_;
    node->item.tenant = &queue_.tenant(node->tenant_name);
    queue_.push(node, node->priority);
    ++submitted_;
  }

  // Jobs queued, in the inbox, or with a slot reserved for the inbox: what the capacity bounds.
  std::size_t occupied() const noexcept { return occupancy_.occupied(); }

  // The time, for queue waits and aging; TimePoint{} (not read) when neither is wanted.
  TimePoint clock() const {
    return opts_.measure_latency || opts_.aging_step > Duration{} ? rt_.now() : TimePoint{};
  }

  void cancel_locked(std::error_code cause) {
    cancelled_ = true;
    // Under the lock, so that every job taken from now on sees a cancelled context. Cancelling
    // runs callbacks that must not block (they never take this mutex).
    cancel_(cause);
  }

  // What a worker is doing, for the books to stay straight if an exception escapes its loop.
  struct WorkerState {
    detail::PoolNode* node = nullptr;  // The job taken, while the worker holds it.
    bool in_job = false;               // Counted in busy_ and its tenant's running.
    // Inbox nodes of finished jobs, given back to the inbox kRecycleBatch at a time, outside the
    // mutex (one compare-and-swap on a line the submitters share, not one per job under it).
    detail::PoolNode* spare_first = nullptr;
    detail::PoolNode* spare_last = nullptr;
    int spares = 0;
  };
  static constexpr int kRecycleBatch = 16;

  void recycle_spares(WorkerState& st) noexcept {
    if (st.spares == 0) return;
    inbox_.recycle(st.spare_first, st.spare_last);
    st.spare_first = st.spare_last = nullptr;
    st.spares = 0;
  }

  // Counts a submitter in room_waiters_ for the duration of its wait for room. Whichever waiter
  // returns from the wait, for any reason, takes over the resumption in progress (see
  // room_resuming_): it passes it on or ends it (also when unwinding: CondVar re-acquires the
  // mutex before an exception leaves it).
  struct RoomWait {
    explicit RoomWait(Impl& p) : pool(p) { ++pool.room_waiters_; }
    ~RoomWait() {
      --pool.room_waiters_;
      pool.room_resuming_ = false;
    }
    RoomWait(const RoomWait&) = delete;
    RoomWait& operator=(const RoomWait&) = delete;
    Impl& pool;
  };

  // Settles a worker's books when it leaves its loop, normally or by an exception that is not a
  // std::exception (escaping a job or on_complete, or a bubble unwinding the thread), so that
  // shutdown and the destructor still see it stop. A destructor rather than a catch handler:
  // during unwinding a bubble lets a thread block again (it may have to wait for the mutex), but
  // inside a catch handler it would throw its unwinding exception once more.
  struct WorkerExit {
    Impl& pool;
    std::unique_lock<Mutex>& lk;
    WorkerState& st;
    ~WorkerExit();
  };

  void worker_main(std::size_t worker);
  inline void finish_job_locked(WorkerState& st);
  void worker_loop(std::unique_lock<Mutex>& lk, WorkerState& st, std::size_t worker);
  // Runs the item's job (or finds it too late); returns whether it ran.
  inline bool run_item(detail::PoolItem& item, TimePoint start, JobOutcome& outcome);
  static inline void invoke(Job& job, const Context& ctx, JobOutcome& outcome);

  Context ctx_;
  CancelFunc cancel_;
  mutable Mutex mu_;
  CondVar work_cv_;  // Worker 0's idle wait.
  CondVar room_cv_;
  CondVar stopped_cv_;
  detail::PoolIdleWorkers idle_;  // After the CondVars above: it makes the other workers' own.
  // Whether submits may use the inbox: with no queued cap per tenant (which needs the tenant's
  // count under the mutex) and room for more than one job.
  const bool inbox_on_;
  detail::PoolInbox inbox_;  // Before queue_: its nodes may be in the queue until the end.
  detail::PoolQueue queue_;
  detail::PoolOccupancy occupancy_;
  bool closed_ = false;
  bool cancelled_ = false;
  int live_ = 0;
  int busy_ = 0;
  std::size_t room_waiters_ = 0;
  // A waiting submitter has been (or is being) resumed and nobody else will be until it has
  // left its wait: it then resumes the next waiter if room remains, or ends the resumption.
  bool room_resuming_ = false;
  std::uint64_t seq_ = 0;
  std::uint64_t submitted_ = 0;
  // With the counts above on one line: every job changes them.
  std::uint64_t completed_ = 0;
  std::uint64_t rejected_full_ = 0;
  std::uint64_t rejected_closed_ = 0;
  std::uint64_t rejected_tenant_limit_ = 0;
  std::uint64_t canceled_ = 0;
  std::uint64_t failed_ = 0;
  std::uint64_t too_late_ = 0;
  // Each worker's latency histograms (PoolOptions::measure_latency), recorded under the mutex
  // and merged by stats(). One pair per worker, each on cache lines of its own: with one pair for
  // all the workers, every record read lines that the other worker had just written.
  struct alignas(64) WorkerHistograms {
    LatencyHistogram queue_wait;
    LatencyHistogram service_time;
  };
  std::vector<WorkerHistograms> histograms_;
  std::vector<std::unique_ptr<ThreadHandle>> threads_;
};

}  // namespace bubble
