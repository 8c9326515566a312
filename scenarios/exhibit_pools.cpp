// A deliberately small pool: one Mutex, two CondVars, a deque. With PoolFlaw::none it keeps the
// promises of <bubble/pool/pool.hpp> for the options it honours; each flaw breaks one of them the
// way a careless edit would.
#include <bubble/cond_var.hpp>
#include <bubble/errc.hpp>
#include <bubble/mutex.hpp>
#include <bubble/scenarios/exhibit_pools.hpp>

#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace bubble::scenarios {

const char* to_string(PoolFlaw flaw) noexcept {
  switch (flaw) {
    case PoolFlaw::none:
      return "none";
    case PoolFlaw::closes_before_draining:
      return "closes_before_draining";
    case PoolFlaw::reads_closed_outside_lock:
      return "reads_closed_outside_lock";
  }
  return "unknown";
}

namespace {

class ExhibitPool final : public PoolUnderTest {
 public:
  ExhibitPool(const PoolOptions& options, PoolFlaw flaw, Runtime& rt)
      : rt_(rt), options_(options), flaw_(flaw), mu_(rt), work_cv_(rt), room_cv_(rt) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    ctx_ = std::move(ctx);
    cancel_ = std::move(cancel);
    live_ = options_.workers;
    for (int i = 0; i < options_.workers; ++i) {
      workers_.push_back(
          rt_.spawn(options_.name + "/worker-" + std::to_string(i), [this] { work(); }));
    }
  }

  ~ExhibitPool() override {
    (void)stop(nullptr);
    for (auto& w : workers_) w->join();
  }

  std::error_code submit(SubmitKind kind, const Context& ctx, Job job, Duration max_wait,
                         JobOptions opts) override {
    if (ctx.done()) return ctx.err();
    if (flaw_ == PoolFlaw::reads_closed_outside_lock && closed_) return refuse(errc::closed);
    std::unique_lock<Mutex> lk(mu_);
    std::optional<std::pair<Context, CancelFunc>> bounded;
    if (kind == SubmitKind::submit_within && max_wait > Duration::zero()) {
      bounded.emplace(Context::with_timeout(ctx, max_wait, rt_));
    }
    // The flawed submit trusts the `closed` it read before locking, until it has waited.
    for (bool waited = false;; waited = true) {
      if (closed_ && (flaw_ != PoolFlaw::reads_closed_outside_lock || waited)) {
        return refuse_locked(errc::closed);
      }
      if (queue_.size() < static_cast<std::size_t>(options_.queue_capacity)) break;
      if (kind == SubmitKind::try_submit || (kind == SubmitKind::submit_within && !bounded)) {
        return refuse_locked(errc::full);
      }
      const std::error_code ec = room_cv_.wait(lk, bounded ? bounded->first : ctx);
      if (ec) {
        if (bounded) bounded->second();
        if (ctx.done()) return ctx.err();
        if (closed_) return refuse_locked(errc::closed);
        return refuse_locked(errc::full);
      }
    }
    if (bounded) bounded->second();
    queue_.push_back({std::move(job), ctx.can_end() ? std::optional<Context>(ctx) : std::nullopt,
                      std::move(opts.on_complete)});
    ++stats_.submitted;
    work_cv_.notify_one();
    return {};
  }

  std::error_code shutdown(const Context& ctx) override { return stop(&ctx); }

  PoolStats stats() const override {
    std::lock_guard<Mutex> lk(mu_);
    PoolStats s = stats_;
    s.workers = options_.workers;
    s.queue_depth = queue_.size();
    s.queue_capacity = static_cast<std::size_t>(options_.queue_capacity);
    s.closed = closed_;
    return s;
  }

 private:
  struct Item {
    Job job;
    std::optional<Context> ctx;
    std::function<void(const JobOutcome&)> on_complete;
  };

  std::error_code refuse(errc e) {
    std::lock_guard<Mutex> lk(mu_);
    return refuse_locked(e);
  }
  std::error_code refuse_locked(errc e) {
    if (e == errc::closed) ++stats_.rejected_closed;
    if (e == errc::full) ++stats_.rejected_full;
    return make_error_code(e);
  }

  // ctx null: a deadline that has already passed (the destructor).
  std::error_code stop(const Context* ctx) {
    std::unique_lock<Mutex> lk(mu_);
    if (!closed_) {
      closed_ = true;
      if (flaw_ == PoolFlaw::closes_before_draining) queue_.clear();
      work_cv_.notify_all();
      room_cv_.notify_all();
    }
    std::error_code result;
    if (ctx == nullptr) cancel_(make_error_code(errc::deadline_exceeded));
    while (live_ > 0) {
      if (ctx != nullptr && !result) {
        const std::error_code ec = stopped_wait(lk, *ctx);
        if (ec && live_ > 0) {
          result = ec;
          cancel_(ec);
        }
      } else {
        stopped_wait(lk, Context::background());
      }
    }
    return result;
  }

  std::error_code stopped_wait(std::unique_lock<Mutex>& lk, const Context& ctx) {
    return room_cv_.wait(lk, ctx);  // workers broadcast room_cv_ when they exit
  }

  void work() {
    std::unique_lock<Mutex> lk(mu_);
    for (;;) {
      while (queue_.empty() && !closed_) work_cv_.wait(lk);
      if (queue_.empty()) break;
      Item item = std::move(queue_.front());
      queue_.pop_front();
      ++stats_.busy_workers;
      room_cv_.notify_all();
      lk.unlock();
      JobOutcome outcome;
      {
        auto [job_ctx, cancel] = Context::with_cancel(item.ctx ? *item.ctx : ctx_);
        Context::Callback link(ctx_, [c = cancel] { c(); });
        try {
          item.job(job_ctx);
          outcome.error = job_ctx.err();
          outcome.status = outcome.error ? JobStatus::canceled : JobStatus::done;
        } catch (const std::exception&) {
          outcome.status = JobStatus::failed;
          outcome.error = errc::job_failed;
          outcome.exception = std::current_exception();
        }
        cancel();
      }
      item.job.reset();
      lk.lock();
      --stats_.busy_workers;
      switch (outcome.status) {
        case JobStatus::done:
          ++stats_.completed;
          break;
        case JobStatus::canceled:
          ++stats_.canceled;
          break;
        case JobStatus::failed:
          ++stats_.failed;
          break;
        case JobStatus::too_late:
          ++stats_.too_late;
          break;
      }
      if (item.on_complete) {
        lk.unlock();
        item.on_complete(outcome);
        lk.lock();
      }
    }
    --live_;
    room_cv_.notify_all();
  }

  Runtime& rt_;
  const PoolOptions options_;
  const PoolFlaw flaw_;
  Context ctx_;
  CancelFunc cancel_;
  mutable Mutex mu_;
  CondVar work_cv_;
  CondVar room_cv_;  // room in the queue, and workers stopping
  std::deque<Item> queue_;
  bool closed_ = false;
  int live_ = 0;
  PoolStats stats_;
  std::vector<std::unique_ptr<ThreadHandle>> workers_;
};

}  // namespace

PoolImplementation exhibit_pool(PoolFlaw flaw) {
  PoolImplementation impl;
  impl.name = std::string("exhibit pool (") + to_string(flaw) + ")";
  impl.make = [flaw](const PoolOptions& options, Runtime& rt) -> std::unique_ptr<PoolUnderTest> {
    return std::make_unique<ExhibitPool>(options, flaw, rt);
  };
  impl.tenants = false;
  impl.priorities = false;
  impl.expected_durations = false;
  impl.room_to_resume = false;
  return impl;
}

}  // namespace bubble::scenarios
