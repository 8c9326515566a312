#include <bubble/limiter/concurrency_limiter.hpp>

#include <stdexcept>
#include <string>

namespace bubble {
namespace {

std::int64_t checked_limit(std::int64_t limit) {
  if (limit < 1) {
    throw std::invalid_argument("bubble::ConcurrencyLimiter: limit must be >= 1, got " +
                                std::to_string(limit));
  }
  return limit;
}

}  // namespace

ConcurrencyLimiter::ConcurrencyLimiter(std::int64_t limit, Runtime& rt)
    : semaphore_("concurrency_limiter.slots", checked_limit(limit), rt) {}

void ConcurrencyLimiter::check_weight(std::int64_t weight) const {
  if (weight < 1 || weight > semaphore_.size()) {
    throw std::invalid_argument("bubble::ConcurrencyLimiter: weight must be in [1, " +
                                std::to_string(semaphore_.size()) + "], got " +
                                std::to_string(weight));
  }
}

std::error_code ConcurrencyLimiter::acquire(const Context& ctx, std::int64_t weight,
                                            SourceLocation where) {
  check_weight(weight);
  return semaphore_.acquire(ctx, weight, where);
}

bool ConcurrencyLimiter::try_acquire(std::int64_t weight, SourceLocation where) {
  check_weight(weight);
  return semaphore_.try_acquire(weight, where);
}

void ConcurrencyLimiter::release(std::int64_t weight, SourceLocation where) {
  if (weight < 1) {
    throw std::invalid_argument("bubble::ConcurrencyLimiter: weight must be >= 1, got " +
                                std::to_string(weight));
  }
  semaphore_.release(weight, where);
}

}  // namespace bubble
