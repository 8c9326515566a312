#include <bubble/sim/engine.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/sim/random.hpp>
#include <bubble/thread.hpp>
#include <bubble/wait_group.hpp>

namespace bubble::sim {

namespace {

using std::chrono::seconds;

// "Unbounded": a capacity no run can reach (the pool allocates per queued job, not up front).
constexpr std::ptrdiff_t kUnboundedQueue = std::numeric_limits<std::ptrdiff_t>::max() / 4;

enum StreamId : int { kMain = 0, kUrgent = 1, kBatch = 2 };

class Engine;

// One source of jobs: its tenant, priority and seeded draws.
struct Stream {
  Engine* engine = nullptr;
  StreamId id = kMain;
  std::string tenant;
  int priority = 0;
  Arrivals arrivals{};
  Draws gaps;
  Draws job_times;
};

Duration to_duration(double seconds_value) {
  const double ns = std::min(seconds_value * 1e9, 1e18);
  return Duration{static_cast<std::int64_t>(std::llround(ns))};
}

class Engine final : public PoolMetricsSink {
 public:
  Engine(const SimConfig& config, Runtime& rt)
      : cfg_(config),
        rt_(rt),
        t0_(rt.now()),
        warm_(t0_ + config.warmup),
        end_(t0_ + config.duration),
        clients_(rt) {
    constexpr std::int64_t kSecond = Duration{seconds{1}}.count();
    const auto seconds_total =
        static_cast<std::size_t>((config.duration.count() + kSecond - 1) / kSecond);
    goodput_by_second_.assign(seconds_total, 0);
    const bool fifo = config.fairness == Fairness::fifo;
    streams_.reserve(3);
    streams_.push_back(Stream{this, kMain, fifo ? "" : "main", 0, config.arrivals,
                              Draws(config.seed, 0), Draws(config.seed, 1)});
    if (config.urgent) {
      streams_.push_back(Stream{this, kUrgent, fifo ? "" : "urgent", 1, *config.urgent,
                                Draws(config.seed, 2), Draws(config.seed, 3)});
    }
    if (config.batch) {
      streams_.push_back(Stream{this, kBatch, fifo ? "" : "batch", 0, Arrivals{},
                                Draws(config.seed, 4), Draws(config.seed, 5)});
    }
  }

  // The root thread of the bubble: builds the pool and its front, runs the streams until the
  // end, then stops everything.
  void run() {
    PoolOptions po;
    po.workers = cfg_.workers;
    po.queue_capacity = cfg_.policy == QueuePolicy::unbounded ? kUnboundedQueue : cfg_.queue;
    // The block policy models a queue whose waiting clients get in as soon as a slot frees (a
    // Go channel send). Resuming waiters in batches saves real threads' wake-ups, which virtual
    // time does not pay for, and would make simulated clients wait longer.
    po.room_to_resume = 1;
    po.name = "sim";
    po.aging_step = cfg_.aging_step;
    po.max_queued_per_tenant = cfg_.tenant_queue;
    po.metrics_sink = this;
    Pool pool(po, rt_);
    pool_ = &pool;
    auto [run_ctx, cancel_run] = Context::with_cancel(Context::background());
    run_ctx_ = run_ctx;
    std::optional<ConcurrencyLimiter> concurrency;
    if (cfg_.concurrency_limit) {
      concurrency.emplace(*cfg_.concurrency_limit, rt_);
      concurrency_ = &*concurrency;
    }
    std::optional<RateLimiter> rate;
    if (cfg_.rate_limit) {
      // A bucket of floor(R / 10) tokens (at least one), topped up every n / R seconds: a tenth
      // of a second's worth of arrivals at a time, so admissions are spread over each second.
      const double n = std::max(1.0, std::floor(*cfg_.rate_limit / 10));
      rate.emplace(pool, static_cast<int>(std::min(n, 1e9)), to_duration(n / *cfg_.rate_limit));
      rate_ = &*rate;
    }
    {
      std::vector<Thread> threads;
      threads.emplace_back(
          "sampler", [this] { sample(); }, rt_);
      for (Stream& s : streams_) {
        if (s.id == kBatch) {
          spawn_batch(s);
        } else {
          threads.emplace_back(
              "arrivals/" + s.tenant, [this, &s] { generate(s); }, rt_);
        }
      }
    }              // the generators and the sampler stop at the end of the run
    cancel_run();  // clients still waiting for room or a token give up
    clients_.wait();
    if (rate) rate->stop();
    auto [done_ctx, cancel_done] = Context::with_cancel(Context::background());
    cancel_done();
    (void)pool.shutdown(done_ctx);  // jobs still queued return at once (serve() sees the end)
  }

  SimResult result() const {
    SimResult r = result_;
    r.window_s = static_cast<double>((end_ - warm_).count()) / 1e9;
    r.throughput_per_s = static_cast<double>(r.completed) / r.window_s;
    r.goodput_per_s = static_cast<double>(r.good) / r.window_s;
    r.utilization = static_cast<double>(busy_.count()) / 1e9 / (cfg_.workers * r.window_s);
    r.latency = latency_.summary();
    r.latency_ms = to_milliseconds(r.latency);
    r.wait_ms = to_milliseconds(wait_.summary());
    for (std::size_t i = 0; i < r.series.t_s.size(); ++i) {
      r.series.goodput.push_back(goodput_by_second_[i]);
    }
    return r;
  }

  // A job's body: sleeps for its job time, drawn now from the job time in force now. It ignores
  // its context (the server does not learn that the client gave up); after the end of the run it
  // returns at once.
  void serve(Stream& s) {
    const TimePoint now = rt_.now();
    if (now >= end_) return;
    ++serving_;
    rt_.sleep_for(s.job_times.job_time(job_time_at(cfg_, now - t0_)));
    --serving_;
  }

  // The job's on_complete.
  void complete(Stream& s, TimePoint arrival, const JobOutcome& o) {
    --in_flight_;
    if (concurrency_ != nullptr) concurrency_->release();
    ++result_.jobs_simulated;
    const TimePoint now = rt_.now();
    if (now >= end_) return;
    if (now >= warm_) busy_ += o.service_time;  // utilization is the whole pool's
    const bool counted = counts(s);
    const bool measured = counted && now >= warm_;
    const Duration latency = now - arrival;
    if (o.status == JobStatus::too_late) {
      if (measured) {
        ++result_.skipped;
        wait_.record(latency);
      }
      return;
    }
    const bool good = !cfg_.client_timeout || latency <= *cfg_.client_timeout;
    if (counted) {
      if (good) ++goodput_by_second_[second_of(now)];
      second_latency_.record(latency);
    }
    if (!measured) return;
    ++result_.completed;
    if (good) {
      ++result_.good;
    } else {
      ++result_.timed_out;
    }
    latency_.record(latency);
    wait_.record(latency - o.service_time);
  }

  // The pool counts a job as queued until a worker takes it, even when an idle worker is about
  // to take it at the same instant; jobs beyond the idle workers are the ones that wait.
  void job_submitted(std::size_t queue_depth) override {
    const TimePoint now = rt_.now();
    const auto idle = static_cast<std::size_t>(cfg_.workers - serving_);
    if (now >= warm_ && now < end_ && queue_depth > idle) {
      result_.max_queue = std::max(result_.max_queue, queue_depth - idle);
    }
  }

 private:
  struct JobBody {
    Stream* s;
    void operator()(const Context&) const { s->engine->serve(*s); }
  };
  struct OnComplete {
    Stream* s;
    TimePoint arrival;
    void operator()(const JobOutcome& o) const { s->engine->complete(*s, arrival, o); }
  };

  bool counts(const Stream& s) const {
    return cfg_.measure == StreamFilter::all || static_cast<int>(cfg_.measure) - 1 == s.id;
  }
  bool measured(const Stream& s, TimePoint t) const { return counts(s) && t >= warm_ && t < end_; }
  std::size_t second_of(TimePoint t) const {
    const auto i = static_cast<std::size_t>((t - t0_) / seconds{1});
    return std::min(i, goodput_by_second_.size() - 1);
  }

  JobOptions options_for(Stream& s, TimePoint arrival) const {
    JobOptions o;
    o.priority = s.priority;
    o.tenant = s.tenant;
    if (cfg_.deadline_skip) o.expected_duration = job_time_at(cfg_, arrival - t0_).mean;
    o.on_complete = OnComplete{&s, arrival};
    return o;
  }

  // The client's context: it gives up at the client timeout (when one is set and something needs
  // the deadline) and at the end of the run.
  Context client_context(const Context& parent) const {
    if (!cfg_.client_timeout) return parent;
    return Context::with_timeout(parent, *cfg_.client_timeout, rt_).first;
  }

  // The rate in force for the main stream at `t` (the last spike covering t wins), and the next
  // moment after t at which it changes (Duration::max() if never).
  double rate_at(const Stream& s, Duration t, Duration& next_change) const {
    next_change = Duration::max();
    if (s.id != kMain) return s.arrivals.per_second;
    double rate = s.arrivals.per_second;
    for (const Spike& sp : cfg_.spikes) {
      if (sp.from <= t && t < sp.to) rate = sp.per_second;
      if (sp.from > t) next_change = std::min(next_change, sp.from);
      if (sp.to > t) next_change = std::min(next_change, sp.to);
    }
    return rate;
  }

  // The arrival after `t` (since the start), or nullopt if it would be at or after the end.
  // Rate changes: Poisson arrivals are memoryless, so a gap that crosses a change is redrawn
  // from the change; clockwork arrivals restart their grid there.
  std::optional<Duration> next_arrival(Stream& s, Duration t) {
    for (;;) {
      if (t >= cfg_.duration) return std::nullopt;
      Duration change;
      const double rate = rate_at(s, t, change);
      if (rate <= 0) {
        if (change == Duration::max()) return std::nullopt;
        t = change;
        continue;
      }
      const double gap_s =
          s.arrivals.kind == ArrivalKind::poisson ? s.gaps.exponential(1 / rate) : 1 / rate;
      const Duration next = t + to_duration(std::min(gap_s, 1e9));
      if (next >= change) {
        t = change;
        continue;
      }
      if (next >= cfg_.duration) return std::nullopt;
      return next;
    }
  }

  void generate(Stream& s) {
    Duration t{};
    while (auto next = next_arrival(s, t)) {
      t = *next;
      rt_.sleep_until(t0_ + t);
      arrive(s, t0_ + t);
    }
  }

  void spawn_batch(Stream& s) {
    clients_.add(1);
    detach(rt_.spawn("batch", [this, &s] {
      rt_.sleep_until(t0_ + cfg_.batch->at);
      for (std::int64_t i = 0; i < cfg_.batch->count && rt_.now() < end_; ++i) {
        const TimePoint now = rt_.now();
        if (measured(s, now)) ++result_.arrived;
        ++in_flight_;
        if (pool_->submit(run_ctx_, JobBody{&s}, options_for(s, now))) {
          --in_flight_;
          if (measured(s, rt_.now())) ++result_.rejected;
        } else {
          note_in_flight();
        }
      }
      clients_.done();
    }));
  }

  void note_in_flight() {
    const TimePoint now = rt_.now();
    if (now >= warm_ && now < end_ && in_flight_ > 0) {
      result_.max_in_flight = std::max(result_.max_in_flight, static_cast<std::size_t>(in_flight_));
    }
  }

  void refuse(Stream& s, TimePoint t) {
    if (measured(s, t)) ++result_.rejected;
  }

  void arrive(Stream& s, TimePoint arrival) {
    if (measured(s, arrival)) ++result_.arrived;
    if (concurrency_ != nullptr && !concurrency_->try_acquire()) return refuse(s, arrival);
    ++in_flight_;
    std::error_code ec;
    if (rate_ != nullptr) {
      ec = rate_->try_submit(JobBody{&s}, options_for(s, arrival));
    } else if (cfg_.deadline_skip) {
      ec = pool_->try_submit(client_context(Context::background()), JobBody{&s},
                             options_for(s, arrival));
    } else {
      ec = pool_->try_submit(Context::background(), JobBody{&s}, options_for(s, arrival));
    }
    if (!ec) return note_in_flight();
    if (ec == errc::full && cfg_.policy == QueuePolicy::block) return wait_for_room(s, arrival);
    --in_flight_;
    if (concurrency_ != nullptr) concurrency_->release();
    refuse(s, arrival);
  }

  // Block policy, queue full: the arrival's client waits for room in a thread of its own, so that
  // arrivals stay open-loop. It stays in flight while it waits.
  void wait_for_room(Stream& s, TimePoint arrival) {
    note_in_flight();
    clients_.add(1);
    detach(rt_.spawn("client", [this, &s, arrival] {
      const Context ctx = client_context(run_ctx_);
      if (const std::error_code ec = pool_->submit(ctx, JobBody{&s}, options_for(s, arrival))) {
        --in_flight_;
        if (concurrency_ != nullptr) concurrency_->release();
        if (measured(s, rt_.now())) {
          ++(ec == errc::canceled || ec == errc::deadline_exceeded ? result_.timed_out
                                                                   : result_.rejected);
        }
      }
      clients_.done();
    }));
  }

  void sample() {
    const auto n = goodput_by_second_.size();
    for (std::size_t k = 1; k <= n; ++k) {
      rt_.sleep_until(std::min(t0_ + seconds{k}, end_));
      const PoolStats st = pool_->stats();
      result_.series.t_s.push_back(static_cast<double>(k - 1));
      result_.series.queue_depth.push_back(st.queue_depth);
      result_.series.in_flight.push_back(
          static_cast<std::size_t>(std::max<std::int64_t>(0, in_flight_)));
      result_.series.p99_ms.push_back(static_cast<double>(second_latency_.quantile(0.99).count()) /
                                      1e6);
      second_latency_.clear();
      if (cfg_.progress) cfg_.progress(rt_.now() - t0_, cfg_.duration);
    }
  }

  const SimConfig& cfg_;
  Runtime& rt_;
  const TimePoint t0_;
  const TimePoint warm_;
  const TimePoint end_;
  std::vector<Stream> streams_;
  Pool* pool_ = nullptr;
  RateLimiter* rate_ = nullptr;
  ConcurrencyLimiter* concurrency_ = nullptr;
  Context run_ctx_;
  WaitGroup clients_;
  std::int64_t in_flight_ = 0;
  int serving_ = 0;  // workers inside serve()
  SimResult result_;
  LatencyHistogram latency_;
  LatencyHistogram wait_;
  LatencyHistogram second_latency_;
  std::vector<std::uint64_t> goodput_by_second_;
  Duration busy_{};
};

}  // namespace

MillisecondSummary to_milliseconds(const LatencySummary& s) {
  auto ms = [](Duration d) { return static_cast<double>(d.count()) / 1e6; };
  return {ms(s.mean), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max)};
}

SimResult simulate(const SimConfig& config) {
  validate(config);
  std::optional<SimResult> out;
  Options opts;
  opts.max_steps = 0;
  opts.name = "sim";
  bubble::run(opts, [&](Runtime& rt) {
    Engine engine(config, rt);
    engine.run();
    out = engine.result();
  });
  return std::move(*out);
}

}  // namespace bubble::sim
