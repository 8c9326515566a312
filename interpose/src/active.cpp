#include <bubble/interpose.hpp>

#include "time_mapping.hpp"

namespace bubble::interpose {

bool active() noexcept {
  return ::bubble::detail::tl_intercepting_runtime != nullptr && detail::on_bubble_thread();
}

}  // namespace bubble::interpose
