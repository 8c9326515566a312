// The worker pool. See pool.hpp for the contract.
//
// One bubble::Mutex guards everything: the queue (pool_queue.hpp), the counters and histograms,
// the flags and the worker/waiter counts. CondVars hang off it: one per worker, where it waits
// while idle (pool_idle_workers.hpp; worker 0's is work_cv_), room_cv_ (submitters wait for room)
// and stopped_cv_ (shutdown waits for the workers to stop).
//
// Idle workers are woken last in, first out (pool_idle_workers.hpp): a job queued while a worker
// is idle wakes the one that went idle last. With one CondVar for all the idle workers the notify
// went to the longest-idle one, and a fifth of those wake-ups found the queue already emptied by
// another worker; woken last in, first out, a twentieth (docs/PERFORMANCE.md, "Idle workers woken
// last in, first out"). Waiting
// submitters are resumed one at a time: a worker that leaves room_to_resume free slots wakes one
// (room_resuming_ says one is on its way), and each resumed submitter wakes the next while room
// remains. A worker's loop takes the lock once per job in the steady state: the critical section
// that accounts for the previous job also takes the next one. Jobs, their contexts and their
// completion callbacks run, and are destroyed, outside the lock.
//
// Clock reads (PoolOptions::measure_latency, or aging): one per submit, outside the lock (the
// moment queued), and one per job in a worker's steady state, after the job and before the lock:
// that single reading is the end of the job just run and the moment the next job is taken, so
// exact latency figures cost two reads per job. A worker reads again only after it waited for
// work, after on_complete or sink callbacks (their time belongs to neither job), and a submitter
// after it waited for room.
//
// The inbox (pool_inbox.hpp; real threads only). On a runtime that is not controlled, a submit
// that finds the pool open, no idle worker to wake and more than one free slot pushes its job
// onto a lock-free stack instead of taking the mutex: with one mutex crossed by every job twice,
// the submitter spent most of its time waiting for the workers' critical sections
// (docs/PERFORMANCE.md, "A submit that does not wait for the workers' lock"). Whoever holds the
// mutex moves the inbox's jobs into the queue, in the order of their pushes, before it reads the
// queue or the counters (a worker before every take, a locked submit before it queues, stats(),
// shutdown as it closes): numbered, counted and placed exactly as if each had been queued at its
// push, so priority, aging, tenant round robin, FIFO order and the counters are unchanged. The
// locked path decides whenever the fast one cannot: an idle worker must be woken, the queue is
// one slot from full, a tenant cap is set (max_queued_per_tenant), the pool is closed (shutdown
// marks the inbox closed under the mutex, together with closed_: a later push fails and its
// submit is refused by the locked path; what was pushed before is queued and run). A worker
// going idle is counted before it looks at the inbox a last time, and a pusher looks at that
// count after its push (both sequentially consistent): either the worker sees the job, or the
// pusher wakes a worker under the mutex. How the capacity holds: pool_occupancy.hpp.
//
// In a bubble the inbox is off: every submit takes the mutex, and the scheduling points (the
// mutex's lock and unlock) are those of a pool without an inbox, so saved schedules replay
// unchanged. The inbox's interleavings are exercised on real threads
// (tests/pool/system/pool_inbox_test.cpp, under ThreadSanitizer in CI).

#include <bubble/pool.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <bubble/cond_var.hpp>
#include <bubble/errc.hpp>
#include <bubble/latency_histogram.hpp>
#include <bubble/mutex.hpp>

#include "pool_idle_workers.hpp"
#include "pool_inbox.hpp"
#include "pool_occupancy.hpp"
#include "pool_options_check.hpp"
#include "pool_queue.hpp"

namespace bubble {

namespace {

enum class Admission { wait, try_once, bounded };

}  // namespace

class Pool::Impl {
 public:
  Impl(Runtime& rt, PoolOptions options)
      : rt_(rt),
        opts_((detail::validate_pool_options(options), std::move(options))),
        room_to_resume_(
            opts_.room_to_resume > 0
                ? static_cast<std::size_t>(opts_.room_to_resume)
                : std::max<std::size_t>(1, static_cast<std::size_t>(opts_.queue_capacity) / 4)),
        mu_(opts_.name + ".lock", rt),
        work_cv_(opts_.name + ".work", rt),
        room_cv_(opts_.name + ".room", rt),
        stopped_cv_(opts_.name + ".stopped", rt),
        idle_(work_cv_, static_cast<std::size_t>(opts_.workers), opts_.name + ".work", rt),
        inbox_on_(!rt.controlled() && opts_.max_queued_per_tenant == 0 &&
                  opts_.queue_capacity >= 2),
        occupancy_(static_cast<std::size_t>(opts_.queue_capacity)) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    ctx_ = std::move(ctx);
    cancel_ = std::move(cancel);
  }

  void start() {
    threads_.reserve(static_cast<std::size_t>(opts_.workers));
    try {
      for (int i = 0; i < opts_.workers; ++i) {
        {
          std::lock_guard<Mutex> lk(mu_);
          ++live_;
        }
        try {
          threads_.push_back(rt_.spawn(opts_.name + "/worker-" + std::to_string(i),
                                       [this, i] { worker_main(static_cast<std::size_t>(i)); }));
        } catch (...) {
          std::lock_guard<Mutex> lk(mu_);
          --live_;
          throw;
        }
      }
    } catch (...) {
      stop_now();
      throw;
    }
  }

  // Shutdown with an already-expired deadline, then join the threads.
  void stop_now() {
    (void)shutdown(nullptr, SourceLocation::current());
    for (auto& t : threads_) t->join();
    threads_.clear();
  }

  std::error_code submit(const Context& ctx, Job& job, JobOptions& opts, Admission mode,
                         Duration max_wait, SourceLocation where) {
    if (!job) throw std::invalid_argument("bubble::Pool::submit: job must not be empty");
    if (opts.expected_duration && *opts.expected_duration < Duration::zero()) {
      throw std::invalid_argument(
          "bubble::Pool::submit: opts.expected_duration must be >= 0, got " +
          format_duration(*opts.expected_duration));
    }
    if (ctx.done()) return ctx.err();
    std::size_t depth = 0;
    const std::error_code ec = admit(ctx, job, opts, mode, max_wait, where, depth);
    if (PoolMetricsSink* sink = opts_.metrics_sink) {
      if (ec == errc::full || ec == errc::closed || ec == errc::tenant_limit) {
        sink->job_rejected(ec);
      } else if (!ec) {
        sink->job_submitted(depth);
      }
    }
    return ec;
  }

  // Shutdown; `ctx` null means a deadline that has already passed.
  std::error_code shutdown(const Context* ctx, SourceLocation where) {
    std::unique_lock<Mutex> lk(mu_, std::defer_lock);
    mu_.lock(where);
    lk = std::unique_lock<Mutex>(mu_, std::adopt_lock);
    if (!closed_) {
      closed_ = true;
      // Together with closed_, under the mutex: from here on a push fails (and its submit takes
      // the locked path, which refuses it), and what was pushed before is queued, to be run.
      if (inbox_on_) queue_pushed_locked(inbox_.close());
      room_cv_.notify_all();
      idle_.wake_all();
    }
    if (ctx == nullptr && !cancelled_) cancel_locked(make_error_code(errc::deadline_exceeded));
    std::error_code result;
    while (live_ > 0) {
      if (ctx != nullptr && !result) {
        const std::error_code ec = stopped_cv_.wait(lk, *ctx, where);
        if (ec && live_ > 0) {
          result = ec;
          if (!cancelled_) cancel_locked(ec);
        }
      } else {
        stopped_cv_.wait(lk, where);
      }
    }
    return result;
  }

  PoolStats stats() const {
    std::lock_guard<Mutex> lk(mu_);
    // Jobs in the inbox were accepted: count them as submitted and queued. (Moving them into the
    // queue changes no observable state, so a const snapshot may do it.)
    const_cast<Impl*>(this)->drain_inbox_locked();
    PoolStats s;
    s.workers = opts_.workers;
    s.busy_workers = busy_;
    s.queue_depth = queue_.size();
    s.queue_capacity = static_cast<std::size_t>(opts_.queue_capacity);
    s.waiting_submitters = room_waiters_;
    s.closed = closed_;
    s.cancelled = cancelled_;
    s.submitted = submitted_;
    s.rejected_full = rejected_full_;
    s.rejected_closed = rejected_closed_;
    s.rejected_tenant_limit = rejected_tenant_limit_;
    s.completed = completed_;
    s.canceled = canceled_;
    s.failed = failed_;
    s.too_late = too_late_;
    s.shed = rejected_full_ + rejected_tenant_limit_ + too_late_;
    s.queue_wait = wait_hist_.summary();
    s.service_time = service_hist_.summary();
    return s;
  }

  Runtime& rt_;
  const PoolOptions opts_;
  // Free slots a full queue needs before a waiting submitter is resumed (PoolOptions).
  const std::size_t room_to_resume_;

 private:
  std::error_code admit(const Context& ctx, Job& job, JobOptions& opts, Admission mode,
                        Duration max_wait, SourceLocation where, std::size_t& depth) {
    TimePoint now = clock();
    if (inbox_on_ && admit_to_inbox(ctx, job, opts, now, where, depth)) return {};
    std::unique_lock<Mutex> lk(mu_, std::defer_lock);
    mu_.lock(where);
    lk = std::unique_lock<Mutex>(mu_, std::adopt_lock);
    drain_inbox_locked();  // Jobs pushed before this submit go first.
    const auto capacity = static_cast<std::size_t>(opts_.queue_capacity);
    const auto tenant_cap = static_cast<std::size_t>(opts_.max_queued_per_tenant);
    std::optional<std::pair<Context, CancelFunc>> bounded;  // submit_within's timeout
    // Cancel the timeout context on the way out (Go's `defer cancel()`), so its timer does not
    // outlive the call.
    struct CancelOnExit {
      std::optional<std::pair<Context, CancelFunc>>& b;
      ~CancelOnExit() {
        if (b) b->second();
      }
    } cancel_bounded{bounded};
    bool waited = false;
    // Leaving after a wait, queued or not, with room left and others waiting: resume the next
    // waiter (the batch goes on, or a notify this thread may have consumed is passed on). True
    // when the caller must notify room_cv_.
    auto pass_room_on_locked = [&] {
      if (!waited || room_waiters_ == 0 || occupied() >= capacity) return false;
      room_resuming_ = true;
      return true;
    };
    auto refuse = [&](errc e, std::uint64_t& counter) {
      ++counter;
      if (pass_room_on_locked()) room_cv_.notify_one();
      return make_error_code(e);
    };
    for (;;) {
      if (closed_) return refuse(errc::closed, rejected_closed_);
      if (tenant_cap > 0) {
        const detail::PoolTenant* t = queue_.find_tenant(opts.tenant);
        if (t != nullptr && t->queued >= tenant_cap) {
          return refuse(errc::tenant_limit, rejected_tenant_limit_);
        }
      }
      if (occupied() < capacity) break;
      if (mode == Admission::try_once || (mode == Admission::bounded && max_wait <= Duration{})) {
        return refuse(errc::full, rejected_full_);
      }
      const Context* wait_ctx = &ctx;
      if (mode == Admission::bounded) {
        if (!bounded) bounded.emplace(Context::with_timeout(ctx, max_wait, rt_));
        wait_ctx = &bounded->first;
      }
      std::error_code ec;
      {
        RoomWait waiting(*this);
        ec = room_cv_.wait(lk, *wait_ctx, where);
      }
      waited = true;
      if (ec) {
        if (ctx.done()) {
          if (pass_room_on_locked()) room_cv_.notify_one();
          return ctx.err();
        }
        if (closed_) return refuse(errc::closed, rejected_closed_);
        return refuse(errc::full, rejected_full_);
      }
      now = clock();
      drain_inbox_locked();
    }
    detail::PoolTenant& tenant = queue_.tenant(opts.tenant);
    detail::PoolNode* node = queue_.allocate();
    detail::PoolItem& item = node->item;  // A recycled node: assign every field.
    item.job = std::move(job);
    if (ctx.can_end()) {
      item.ctx = ctx;
    } else {
      item.ctx.reset();
    }
    item.on_complete = std::move(opts.on_complete);
    item.expected_duration = opts.expected_duration;
    item.enqueued = now;
    item.seq = ++seq_;
    item.tenant = &tenant;
    queue_.push(node, opts.priority);
    ++submitted_;
    occupancy_.admit();
    depth = occupied();
    // Wake the idle worker that went idle last, unless enough are already on their way for the
    // jobs queued.
    CondVar* const wake_worker = queue_.size() > idle_.waking() ? idle_.choose() : nullptr;
    const bool wake_submitter = pass_room_on_locked();
    // Notify after unlocking, so that the woken threads do not find the mutex still held. (The
    // CondVar is the pool's: it outlives this call.)
    if (wake_worker != nullptr || wake_submitter) {
      lk.unlock();
      if (wake_worker != nullptr) wake_worker->notify_one();
      if (wake_submitter) room_cv_.notify_one();
    }
    return {};
  }

  // The submit without the mutex (real threads only: see "The inbox" at the top of this file).
  // Returns true when the job is in the inbox (depth: the jobs queued with it), false, with
  // `job` and `opts` as they came, when the locked path must decide.
  bool admit_to_inbox(const Context& ctx, Job& job, JobOptions& opts, TimePoint now,
                      SourceLocation where, std::size_t& depth) {
    // An idle worker must be woken under the mutex: the locked path does it.
    if (idle_.idle_count(std::memory_order_relaxed) != 0) return false;
    // Never the last slot: that one the locked path decides (pool_occupancy.hpp).
    const std::size_t reserved = occupancy_.reserve(opts_.metrics_sink != nullptr);
    if (reserved == 0) return false;
    detail::PoolNode* node = inbox_.allocate();
    detail::PoolItem& item = node->item;  // A recycled node: assign every field.
    item.job = std::move(job);
    if (ctx.can_end()) {
      item.ctx = ctx;
    } else {
      item.ctx.reset();
    }
    item.on_complete = std::move(opts.on_complete);
    item.expected_duration = opts.expected_duration;
    item.enqueued = now;
    item.seq = 0;           // Numbered when queued.
    item.tenant = nullptr;  // Resolved when queued.
    node->priority = opts.priority;
    node->tenant_name = std::move(opts.tenant);
    if (!inbox_.push(node)) {
      // Closed meanwhile: give everything back; the locked path refuses the job.
      job = std::move(item.job);
      opts.on_complete = std::move(item.on_complete);
      opts.tenant = std::move(node->tenant_name);
      item.on_complete = nullptr;
      item.ctx.reset();
      inbox_.recycle(node, node);
      occupancy_.unreserve();
      return false;
    }
    depth = reserved;
    // A worker that went idle after the check above may have missed the push (see
    // PoolIdleWorkers::wait): wake one under the mutex, as the locked path would have.
    if (idle_.idle_count(std::memory_order_seq_cst) != 0) {
      std::unique_lock<Mutex> lk(mu_, std::defer_lock);
      mu_.lock(where);
      lk = std::unique_lock<Mutex>(mu_, std::adopt_lock);
      drain_inbox_locked();
      CondVar* const wake_worker = queue_.size() > idle_.waking() ? idle_.choose() : nullptr;
      lk.unlock();
      if (wake_worker != nullptr) wake_worker->notify_one();
    }
    return true;
  }

  // Moves the inbox's jobs into the queue, in the order of their pushes: numbered and counted as
  // if each had been queued by the locked path at its push. Called with the mutex held before
  // anything reads the queue or the counters.
  void drain_inbox_locked() {
    if (inbox_on_) queue_pushed_locked(inbox_.take_all());
  }

  void queue_pushed_locked(detail::PoolNode* node) {
    while (node != nullptr) {
      detail::PoolNode* const next = node->next;
      node->item.seq = ++seq_;
      node->item.tenant = &queue_.tenant(node->tenant_name);
      queue_.push(node, node->priority);
      ++submitted_;
      node = next;
    }
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
    ~WorkerExit() {
      if (!lk.owns_lock()) lk.lock();
      if (st.in_job) pool.finish_job_locked(st);
      pool.recycle_spares(st);
      if (--pool.live_ == 0) pool.stopped_cv_.notify_all();
    }
  };

  void worker_main(std::size_t worker) {
    std::unique_lock<Mutex> lk(mu_);
    WorkerState st;
    WorkerExit exit{*this, lk, st};
    worker_loop(lk, st, worker);
  }

  void finish_job_locked(WorkerState& st) {
    st.in_job = false;
    --busy_;
    detail::PoolItem& item = st.node->item;
    // Normally already reset outside the lock; not when an exception is unwinding the worker.
    item.job.reset();
    item.ctx.reset();
    item.on_complete = nullptr;
    detail::PoolTenant& tenant = *item.tenant;
    item.tenant = nullptr;
    --tenant.running;
    queue_.release_tenant(tenant);
    if (st.node->from_inbox) {
      st.node->next = st.spare_first;
      st.spare_first = st.node;
      if (st.spares++ == 0) st.spare_last = st.node;
    } else {
      queue_.release(st.node);
    }
    st.node = nullptr;
  }

  void worker_loop(std::unique_lock<Mutex>& lk, WorkerState& st, std::size_t worker) {
    TimePoint now = clock();
    PoolMetricsSink* const sink = opts_.metrics_sink;
    for (;;) {
      drain_inbox_locked();
      st.node = queue_.take(now, opts_.aging_step, opts_.max_running_per_tenant);
      if (st.node == nullptr) {
        if (closed_ && queue_.empty()) return;
        idle_.wait(lk, worker, [this] { return inbox_on_ && inbox_.has_pushes(); });
        now = clock();
        continue;
      }
      occupancy_.take();
      detail::PoolItem& item = st.node->item;
      // `now` was read before this critical section (it also ended the previous job): a job
      // queued by another thread since then has waited zero, not a negative time.
      const Duration wait = std::max(now - item.enqueued, Duration::zero());
      if (opts_.measure_latency) wait_hist_.record(wait);
      ++busy_;
      ++item.tenant->running;
      st.in_job = true;
      // Resume a waiting submitter once the queue has room_to_resume_ free slots, unless a
      // resumption is already under way (the resumed submitter passes it on).
      const bool wake_submitter =
          room_waiters_ > 0 && !room_resuming_ &&
          static_cast<std::size_t>(opts_.queue_capacity) - occupied() >= room_to_resume_;
      if (wake_submitter) room_resuming_ = true;
      if (closed_ && queue_.empty() && idle_.any()) idle_.wake_all();
      const int busy = busy_;
      lk.unlock();
      if (wake_submitter) room_cv_.notify_one();  // After unlocking, as in admit().
      if (st.spares >= kRecycleBatch) recycle_spares(st);

      if (sink != nullptr) sink->job_started(wait, busy);
      JobOutcome outcome;
      outcome.queue_wait = wait;
      const TimePoint start = now;
      const bool ran = run_item(item, start, outcome);
      if (ran && opts_.measure_latency) {
        now = rt_.now();
        outcome.service_time = now - start;
      }
      // Drop the job's state outside the lock; the node goes back to the queue under it.
      item.job.reset();
      item.ctx.reset();
      std::function<void(const JobOutcome&)> on_complete = std::move(item.on_complete);
      item.on_complete = nullptr;

      lk.lock();
      finish_job_locked(st);
      if (ran && opts_.measure_latency) service_hist_.record(outcome.service_time);
      switch (outcome.status) {
        case JobStatus::done:
          ++completed_;
          break;
        case JobStatus::canceled:
          ++canceled_;
          break;
        case JobStatus::too_late:
          ++too_late_;
          break;
        case JobStatus::failed:
          ++failed_;
          break;
      }
      if (on_complete || sink != nullptr) {
        lk.unlock();
        if (sink != nullptr) sink->job_finished(outcome);
        if (on_complete) {
          on_complete(outcome);
          on_complete = nullptr;
        }
        lk.lock();
        now = clock();
      }
    }
  }

  // Runs the item's job (or finds it too late); returns whether it ran.
  bool run_item(detail::PoolItem& item, TimePoint start, JobOutcome& outcome) {
    // `start` is the time the job was taken, or TimePoint{} when the pool reads no clock.
    if (item.expected_duration && item.ctx) {
      const std::optional<TimePoint> deadline = item.ctx->deadline();
      if (!opts_.measure_latency && opts_.aging_step == Duration{}) start = rt_.now();
      if (deadline && *deadline - start < *item.expected_duration) {
        outcome.status = JobStatus::too_late;
        outcome.error = errc::too_late;
        return false;
      }
    }
    if (!item.ctx) {
      invoke(item.job, ctx_, outcome);
      return true;
    }
    // The job's context ends when either its submitter's context or the pool's ends.
    auto [job_ctx, cancel] = Context::with_cancel(*item.ctx);
    {
      Context::Callback link(ctx_, [c = cancel] { c(); });
      invoke(item.job, job_ctx, outcome);
    }
    cancel();  // The job is over: release the context (Go's `defer cancel()`).
    return true;
  }

  static void invoke(Job& job, const Context& ctx, JobOutcome& outcome) {
    try {
      job(ctx);
      outcome.error = ctx.err();
      outcome.status = outcome.error ? JobStatus::canceled : JobStatus::done;
    } catch (const std::exception&) {
      outcome.status = JobStatus::failed;
      outcome.error = errc::job_failed;
      outcome.exception = std::current_exception();
    }
    // Exceptions of other types (a bubble's forced unwind, RapidCheck results) propagate.
  }

  Context ctx_;
  CancelFunc cancel_;
  mutable Mutex mu_;
  CondVar work_cv_;  // Worker 0's idle wait.
  CondVar room_cv_;
  CondVar stopped_cv_;
  detail::PoolIdleWorkers idle_;  // After the CondVars above: it makes the other workers' own.
  // Whether submits may use the inbox: on real threads, with no queued cap per tenant (which
  // needs the tenant's count under the mutex) and room for more than one job.
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
  std::uint64_t rejected_full_ = 0;
  std::uint64_t rejected_closed_ = 0;
  std::uint64_t rejected_tenant_limit_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t canceled_ = 0;
  std::uint64_t failed_ = 0;
  std::uint64_t too_late_ = 0;
  LatencyHistogram wait_hist_;
  LatencyHistogram service_hist_;
  std::vector<std::unique_ptr<ThreadHandle>> threads_;
};

Pool::Pool(PoolOptions options, Runtime& rt)
    : impl_(std::make_unique<Impl>(rt, std::move(options))) {
  impl_->start();
}

Pool::~Pool() {
  impl_->stop_now();
}

std::error_code Pool::submit(const Context& ctx, Job job, JobOptions opts, SourceLocation where) {
  return impl_->submit(ctx, job, opts, Admission::wait, Duration{}, where);
}

std::error_code Pool::try_submit(const Context& ctx, Job job, JobOptions opts,
                                 SourceLocation where) {
  return impl_->submit(ctx, job, opts, Admission::try_once, Duration{}, where);
}

std::error_code Pool::submit_within(const Context& ctx, Job job, Duration max_wait, JobOptions opts,
                                    SourceLocation where) {
  return impl_->submit(ctx, job, opts, Admission::bounded, max_wait, where);
}

std::error_code Pool::shutdown(const Context& ctx, SourceLocation where) {
  return impl_->shutdown(&ctx, where);
}

PoolStats Pool::stats() const {
  return impl_->stats();
}

Runtime& Pool::runtime() const noexcept {
  return impl_->rt_;
}

const PoolOptions& Pool::options() const noexcept {
  return impl_->opts_;
}

}  // namespace bubble
