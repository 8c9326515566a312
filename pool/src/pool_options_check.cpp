// The checks of PoolOptions (see <bubble/pool/options.hpp>).

#include "pool_options_check.hpp"

#include <stdexcept>
#include <string>

#include <bubble/time.hpp>

namespace bubble {

namespace detail {

void validate_pool_options(const PoolOptions& o) {
  if (o.workers < 1) {
    throw std::invalid_argument("bubble::Pool: options.workers must be >= 1, got " +
                                std::to_string(o.workers));
  }
  if (o.queue_capacity < 1) {
    throw std::invalid_argument("bubble::Pool: options.queue_capacity must be >= 1, got " +
                                std::to_string(o.queue_capacity));
  }
  if (o.room_to_resume < 0 || o.room_to_resume > o.queue_capacity) {
    throw std::invalid_argument(
        "bubble::Pool: options.room_to_resume must be >= 0 and <= queue_capacity (" +
        std::to_string(o.queue_capacity) + "), got " + std::to_string(o.room_to_resume));
  }
  if (o.aging_step < Duration::zero()) {
    throw std::invalid_argument("bubble::Pool: options.aging_step must be >= 0, got " +
                                format_duration(o.aging_step));
  }
  if (o.max_queued_per_tenant < 0) {
    throw std::invalid_argument("bubble::Pool: options.max_queued_per_tenant must be >= 0, got " +
                                std::to_string(o.max_queued_per_tenant));
  }
  if (o.max_running_per_tenant < 0) {
    throw std::invalid_argument("bubble::Pool: options.max_running_per_tenant must be >= 0, got " +
                                std::to_string(o.max_running_per_tenant));
  }
}

}  // namespace detail
}  // namespace bubble
