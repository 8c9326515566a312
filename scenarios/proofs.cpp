// The proofs of the proofs suite: their workloads, enumerated, and the conditions their runs
// must meet (those of the limiter and pool suites' properties).
#include <bubble/scenarios/proofs.hpp>

#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/testing/property.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "limiter_rate_run.hpp"
#include "limiter_rate_workload.hpp"

namespace bubble::scenarios {
namespace {

using std::chrono::milliseconds;

// The rate limiter's workloads: one RateLimiter (n = 1 per 10 ms) feeding a pool of one worker
// and a queue of one; 1 to 4 calls by one submitter, one call by each of two, or two calls by one
// submitter and one by another; each call a submit (waits for a token and for room) or a
// try_submit (refused with full when the queue is taken, which refunds its token), in every
// combination; every job works 10 ms; stop() never called before the end, or, for a single call,
// called at 10 ms, the first refill, racing it.
std::vector<RateWorkload> rate_workloads() {
  std::vector<RateWorkload> out;
  const std::vector<std::vector<int>> splits = {{1}, {2}, {3}, {4}, {1, 1}, {2, 1}};
  for (const std::vector<int>& split : splits) {
    int calls = 0;
    for (const int size : split) calls += size;
    for (unsigned kinds = 0; kinds < (1U << static_cast<unsigned>(calls)); ++kinds) {
      for (const int stop_at : {-1, 10}) {
        if (stop_at >= 0 && calls > 1) continue;
        RateWorkload w;
        w.workers = 1;
        w.queue_capacity = 1;
        w.limiters = {RateLimiterSpec{.n = 1, .interval_ms = 10, .stop_at_ms = stop_at}};
        unsigned call = 0;
        for (const int size : split) {
          std::vector<RateCall> submitter;
          for (int i = 0; i < size; ++i, ++call) {
            submitter.push_back(RateCall{.try_submit = ((kinds >> call) & 1U) != 0, .work_ms = 10});
          }
          w.submitters.push_back(std::move(submitter));
        }
        out.push_back(std::move(w));
      }
    }
  }
  return out;
}

// Proof::describe for workloads held in `workloads`: workload i as its showValue prints it.
template <class Workload>
std::function<std::string(std::size_t)> describe_workloads(
    std::shared_ptr<const std::vector<Workload>> workloads) {
  return [workloads = std::move(workloads)](std::size_t i) {
    std::ostringstream os;
    showValue((*workloads)[i], os);
    return os.str();
  };
}

}  // namespace

template <class Limiter>
Proof rate_limiter_proof_of(const std::string& limiter) {
  auto workloads = std::make_shared<const std::vector<RateWorkload>>(rate_workloads());
  Proof proof;
  // Property: in every run of every workload, no window admits more than n; a refund never lifts
  // the bucket above what the window has left; every call ends with a documented result; a call
  // made after stop() returns limiter_stopped (check_rate_observations lists the conditions).
  proof.name = limiter + " admits at most n per window (refunds, stop)";
  proof.configuration =
      "n = 1 per 10 ms into a pool of 1 worker and a queue of 1; 1-4 submits and try_submits by "
      "one submitter, one by each of two, or two by one and one by another; stop() at the first "
      "refill (one call) or never";
  proof.workloads = workloads->size();
  proof.default_bound = 1;
  proof.describe = describe_workloads(workloads);
  proof.run = [workloads](std::size_t i, const Options& options) {
    RateWorkload w = (*workloads)[i];
    w.schedule.picks = options.strategy.picks();
    RateObservations obs;
    (void)run_rate_workload<Limiter>(w, options, obs);
    check_rate_observations(w, obs, /*exact=*/false);
  };
  return proof;
}

namespace {

// The pool's shutdown workloads: 2 workers and a queue of 2; 1 to 4 jobs of 10 ms by one
// submitter, all handed over with submit, try_submit or submit_within (5 ms); shutdown at 0 ms
// (racing the submits, which go through the pool's lock-free inbox) with a grace that lets every
// job finish (drain), that ends while jobs run (5 ms: cancel at the deadline) or that has already
// ended (0 ms: cancel at once), or no shutdown at all (the destructor, once the submitter has
// returned).
std::vector<PoolCase> shutdown_workloads() {
  std::vector<PoolCase> out;
  for (int jobs = 1; jobs <= 4; ++jobs) {
    for (const SubmitKind kind :
         {SubmitKind::submit, SubmitKind::try_submit, SubmitKind::submit_within}) {
      for (const int grace : {1000, 5, 0, -1}) {
        PoolCase c;
        c.workers = 2;
        c.capacity = 2;
        std::vector<JobSpec> submitter(static_cast<std::size_t>(jobs));
        for (JobSpec& job : submitter) {
          job.kind = kind;
          job.work = DurationValue{milliseconds(10)};
          job.max_wait = DurationValue{milliseconds(5)};
        }
        c.submitters.push_back(std::move(submitter));
        if (grace >= 0) {
          c.shutdowns.push_back({DurationValue{}, DurationValue{milliseconds(grace)}});
        }
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

}  // namespace

Proof shutdown_proof(const PoolImplementation& impl) {
  auto workloads = std::make_shared<const std::vector<PoolCase>>(shutdown_workloads());
  Proof proof;
  // Property: in every run of every workload, every accepted job reports exactly one outcome and
  // a job reported done ran once (shutdown loses no accepted job, whatever its mode); a refused
  // job never runs; every submit that started before the shutdown returned by its instant; the
  // counters agree (pool_case_body lists the conditions).
  proof.name = impl.name + ": shutdown loses no accepted job (every mode, inbox included)";
  proof.configuration =
      "2 workers, a queue of 2; 1-4 jobs of 10 ms by one submitter, by submit, try_submit or "
      "submit_within; shutdown at 0 ms that drains, cancels at 5 ms or at once, or the "
      "destructor";
  proof.workloads = workloads->size();
  proof.default_bound = 1;
  proof.describe = describe_workloads(workloads);
  proof.run = [workloads, impl](std::size_t i, const Options& options) {
    (void)testing::run_property(options, pool_case_body(impl, (*workloads)[i]));
  };
  return proof;
}

Proof rate_limiter_proof() {
  return rate_limiter_proof_of<RateLimiter>("rate limiter");
}

}  // namespace bubble::scenarios
