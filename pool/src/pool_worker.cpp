// The workers: worker_main() runs a worker's loop under the WorkerExit guard; worker_loop() takes
// a job, runs it outside the mutex and books it (one critical section per job in the steady
// state); finish_job_locked() gives the job's node back; run_item() and invoke() run the job with
// its context and turn what happened into a JobOutcome.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>

#include <bubble/errc.hpp>
#include <bubble/pool/pool.hpp>

#include "pool_impl.hpp"

namespace bubble {

Pool::Impl::WorkerExit::~WorkerExit() {
  if (!lk.owns_lock()) lk.lock();
  if (st.in_job) pool.finish_job_locked(st);
  pool.recycle_spares(st);
  if (--pool.live_ == 0) pool.stopped_cv_.notify_all();
}

void Pool::Impl::worker_main(std::size_t worker) {
  std::unique_lock<Mutex> lk(mu_);
  WorkerState st;
  WorkerExit exit{*this, lk, st};
  worker_loop(lk, st, worker);
}

void Pool::Impl::finish_job_locked(WorkerState& st) {
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

void Pool::Impl::worker_loop(std::unique_lock<Mutex>& lk, WorkerState& st, std::size_t worker) {
  TimePoint now = clock();
  PoolMetricsSink* const sink = opts_.metrics_sink;
  WorkerHistograms& histograms = histograms_[worker];
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
    if (opts_.measure_latency) histograms.queue_wait.record(wait);
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
    if (ran && opts_.measure_latency) histograms.service_time.record(outcome.service_time);
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

bool Pool::Impl::run_item(detail::PoolItem& item, TimePoint start, JobOutcome& outcome) {
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

void Pool::Impl::invoke(Job& job, const Context& ctx, JobOutcome& outcome) {
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

}  // namespace bubble
