#pragma once

#include <cstdint>
#include <system_error>
#include <type_traits>
#include <utility>

#include <bubble/context.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/weighted_semaphore.hpp>

namespace bubble {

// ConcurrencyLimiter lets at most `limit` units of work be in flight at once (a concurrency limit,
// not a rate limit): the rule "at most 50 people inside", where a rate limit is "10 customers per
// minute". When the work slows down, a concurrency limit automatically lets less
// in (in flight = rate x time per job, Little's law), which is the relief a struggling
// dependency needs; a rate limit would keep sending at the same pace. In practice, use both: a
// rate limit for the contract (TokenBucket, RateLimiter), a concurrency limit for safety.
//
// A unit of work has a weight (1 by default): a request that costs more may take more units.
// It is a thin layer over WeightedSemaphore, with its fairness: waiters are served first come,
// first served, and a heavy waiter at the head is not overtaken by lighter ones.
//
// Thread safety: every member may be called concurrently from threads of the limiter's runtime.
// Units are not owned by a thread: any thread may release them. The limiter must outlive its
// waiters.
class ConcurrencyLimiter {
 public:
  // A limiter of `limit` units on `rt`. Throws std::invalid_argument naming the value if
  // limit < 1.
  explicit ConcurrencyLimiter(std::int64_t limit, Runtime& rt = current_runtime());
  ConcurrencyLimiter(const ConcurrencyLimiter&) = delete;
  ConcurrencyLimiter& operator=(const ConcurrencyLimiter&) = delete;

  // Blocks until `weight` units are free and takes them (returns {}), or until ctx ends (returns
  // ctx.err() and takes nothing; at once if ctx is already done). Throws std::invalid_argument if
  // weight < 1 or weight > limit() (such a request could never be admitted).
  [[nodiscard]] std::error_code acquire(const Context& ctx, std::int64_t weight = 1,
                                        SourceLocation where = SourceLocation::current());

  // Takes `weight` units if they are free and nobody is waiting; returns whether it did. Never
  // blocks. Throws as acquire.
  [[nodiscard]] bool try_acquire(std::int64_t weight = 1,
                                 SourceLocation where = SourceLocation::current());

  // Gives back `weight` units taken by acquire or try_acquire, admitting waiters that now fit.
  // Throws std::invalid_argument if weight < 1 and std::logic_error if more units would be
  // released than are in flight (the limiter is then unchanged).
  void release(std::int64_t weight = 1, SourceLocation where = SourceLocation::current());

  // Runs fn() holding `weight` units: acquires them (returning acquire's error without running fn
  // if ctx ends first), runs fn, and releases them when fn returns or throws. Returns {} once fn
  // has run.
  template <class F>
  [[nodiscard]] std::error_code run(const Context& ctx, F&& fn, std::int64_t weight = 1,
                                    SourceLocation where = SourceLocation::current()) {
    if (auto ec = acquire(ctx, weight, where)) return ec;
    struct Release {
      ConcurrencyLimiter* self = nullptr;
      std::int64_t weight = 0;
      SourceLocation where;
      ~Release() { self->release(weight, where); }
    } release_on_exit{this, weight, where};
    std::forward<F>(fn)();
    return {};
  }

  // The most units in flight at once.
  std::int64_t limit() const noexcept { return semaphore_.size(); }
  // The units in flight now. A snapshot.
  std::int64_t in_flight() const noexcept { return semaphore_.in_use(); }

 private:
  void check_weight(std::int64_t weight) const;

  WeightedSemaphore semaphore_;
};

}  // namespace bubble
