#include <bubble/interpose.hpp>

#include "time_mapping.hpp"

// Tells the framework that this program has the interposer (bubble::intercept_std_available(),
// and the LD_PRELOAD of replay lines when this is libbubble_interpose.so): looked up with dlsym,
// so exported, also from an executable that links bubble::interpose (interpose/CMakeLists.txt).
extern "C" [[gnu::visibility("default"), gnu::used]] const char bubble_interpose_present = 1;

namespace bubble::interpose {

bool active() noexcept {
  return ::bubble::detail::tl_intercepting_runtime != nullptr && detail::on_bubble_thread();
}

}  // namespace bubble::interpose
