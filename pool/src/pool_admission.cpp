// Admission: Pool::Impl::submit checks its arguments and reports to the metrics sink; admit()
// queues a job under the mutex, waiting for room as the submit's mode allows, and admit_to_inbox()
// leaves it in the lock-free inbox on real threads when nothing needs the mutex (see "The inbox"
// at the top of pool_impl.hpp).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include <bubble/errc.hpp>
#include <bubble/pool/pool.hpp>

#include "pool_impl.hpp"

namespace bubble {

std::error_code Pool::Impl::submit(const Context& ctx, Job& job, JobOptions& opts, Admission mode,
                                   Duration max_wait, SourceLocation where) {
  if (!job) throw std::invalid_argument("bubble::Pool::submit: job must not be empty");
  if (opts.expected_duration && *opts.expected_duration < Duration::zero()) {
    throw std::invalid_argument("bubble::Pool::submit: opts.expected_duration must be >= 0, got " +
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

namespace {

// Moves a submit's job, context, completion callback and options into a recycled item (every
// field but its number and tenant, which each path sets). The context is kept only if it can
// end: the job's context then ends with it.
void fill_item(detail::PoolItem& item, const Context& ctx, Job& job, JobOptions& opts,
               TimePoint now) {
  item.job = std::move(job);
  if (ctx.can_end()) {
    item.ctx = ctx;
  } else {
    item.ctx.reset();
  }
  item.on_complete = std::move(opts.on_complete);
  item.expected_duration = opts.expected_duration;
  item.enqueued = now;
}

}  // namespace

std::error_code Pool::Impl::admit(const Context& ctx, Job& job, JobOptions& opts, Admission mode,
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
  detail::PoolItem& item = node->item;
  fill_item(item, ctx, job, opts, now);
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

bool Pool::Impl::admit_to_inbox(const Context& ctx, Job& job, JobOptions& opts, TimePoint now,
                                SourceLocation where, std::size_t& depth) {
  // An idle worker must be woken under the mutex: the locked path does it.
  if (idle_.idle_count(std::memory_order_relaxed) != 0) return false;
  // Never the last slot: that one the locked path decides (pool_occupancy.hpp).
  const std::size_t reserved = occupancy_.reserve(opts_.metrics_sink != nullptr);
  if (reserved == 0) return false;
  detail::PoolNode* node = inbox_.allocate();
  detail::PoolItem& item = node->item;
  fill_item(item, ctx, job, opts, now);
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

}  // namespace bubble
