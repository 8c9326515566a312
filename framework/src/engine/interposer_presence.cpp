// Whether the program has bubble::interpose, and how it got it: linked into the executable, or
// preloaded from a shared object (then replay lines carry the LD_PRELOAD that loaded it). The
// interposer defines the exported symbol bubble_interpose_present (interpose/src/active.cpp),
// looked up once in the process's global scope.

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <bubble/bubble.hpp>

#include "engine/bubble.hpp"

namespace bubble {
namespace {

struct Presence {
  bool present = false;
  std::string preload;  // "LD_PRELOAD=... " when the interposer is a preloaded shared object.
};

// `s`, quoted for a POSIX shell when it holds anything but characters that need no quoting.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_-./:=+,@%") == std::string::npos) {
    return s;
  }
  std::string quoted = "'";
  for (const char c : s) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

const Presence& presence() {
  static const Presence found = [] {
    Presence p;
    void* marker = ::dlsym(RTLD_DEFAULT, "bubble_interpose_present");
    p.present = marker != nullptr;
    if (!p.present) return p;
    Dl_info interposer{};
    Dl_info framework{};
    const char* preload = std::getenv("LD_PRELOAD");
    if (::dladdr(marker, &interposer) != 0 &&
        ::dladdr(reinterpret_cast<const void*>(&intercept_std_available), &framework) != 0 &&
        interposer.dli_fbase != framework.dli_fbase && preload != nullptr && *preload != '\0') {
      p.preload = "LD_PRELOAD=" + shell_word(preload) + " ";
    }
    return p;
  }();
  return found;
}

}  // namespace

bool intercept_std_available() noexcept {
  return presence().present;
}

std::string replay_line(const Strategy& strategy) {
  return "replay: " + presence().preload + "BUBBLE_STRATEGY=" + strategy.to_string();
}

namespace engine {

std::string replay_prefix() {
  return "replay: " + presence().preload + "BUBBLE_STRATEGY=";
}

}  // namespace engine
}  // namespace bubble
