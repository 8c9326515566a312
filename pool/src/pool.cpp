// The worker pool's life and its public members: constructing Pool::Impl, spawning the workers
// (start), shutting down (close, wait for the workers, cancel at the deadline), stats(), and the
// Pool members that forward to Impl. The design (one mutex, idle workers, clock reads, the inbox)
// is described at the top of pool_impl.hpp; admission is in pool_admission.cpp, the workers in
// pool_worker.cpp.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <bubble/errc.hpp>
#include <bubble/pool/pool.hpp>

#include "pool_impl.hpp"
#include "pool_options_check.hpp"

namespace bubble {

Pool::Impl::Impl(Runtime& rt, PoolOptions options)
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
      inbox_on_(opts_.max_queued_per_tenant == 0 && opts_.queue_capacity >= 2),
      inbox_(inbox_on_ ? static_cast<std::size_t>(opts_.queue_capacity) : 0, opts_.name + ".inbox",
             rt),
      occupancy_(static_cast<std::size_t>(opts_.queue_capacity), opts_.name),
      histograms_(static_cast<std::size_t>(opts_.workers)) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  ctx_ = std::move(ctx);
  cancel_ = std::move(cancel);
}

void Pool::Impl::start() {
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

void Pool::Impl::stop_now() {
  (void)shutdown(nullptr, SourceLocation::current());
  for (auto& t : threads_) t->join();
  threads_.clear();
}

std::error_code Pool::Impl::shutdown(const Context* ctx, SourceLocation where) {
  std::unique_lock<Mutex> lk(mu_, std::defer_lock);
  mu_.lock(where);
  lk = std::unique_lock<Mutex>(mu_, std::adopt_lock);
  if (!closed_) {
    closed_ = true;
    // Together with closed_, under the mutex: from here on a push fails (and its submit takes
    // the locked path, which refuses it), and what was pushed before is queued, to be run.
    if (inbox_on_) inbox_.close([this](detail::PoolNode* node) { queue_pushed_locked(node); });
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

PoolStats Pool::Impl::stats() const {
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
  LatencyHistogram queue_wait;
  LatencyHistogram service_time;
  for (const WorkerHistograms& h : histograms_) {
    queue_wait.merge(h.queue_wait);
    service_time.merge(h.service_time);
  }
  s.queue_wait = queue_wait.summary();
  s.service_time = service_time.summary();
  return s;
}

Pool::Pool(PoolOptions options, Runtime& rt)
    : impl_(std::make_unique<Impl>(rt, std::move(options))) {
  impl_->start();
}

Pool::~Pool() {
  impl_->stop_now();
}

std::error_code Pool::submit(const Context& ctx, Job job, JobOptions opts, SourceLocation where) {
  return impl_->submit(ctx, job, opts, Impl::Admission::wait, Duration{}, where);
}

std::error_code Pool::try_submit(const Context& ctx, Job job, JobOptions opts,
                                 SourceLocation where) {
  return impl_->submit(ctx, job, opts, Impl::Admission::try_once, Duration{}, where);
}

std::error_code Pool::submit_within(const Context& ctx, Job job, Duration max_wait, JobOptions opts,
                                    SourceLocation where) {
  return impl_->submit(ctx, job, opts, Impl::Admission::bounded, max_wait, where);
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
