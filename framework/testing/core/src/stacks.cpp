#include <bubble/detail/demangle.hpp>
#include <bubble/testing/stacks.hpp>

#include <backtrace.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace bubble::testing {
namespace {

void ignore_error(void* /*data*/, const char* /*msg*/, int /*errnum*/) {}

// One libbacktrace state for the process (it caches the debug information it has read).
backtrace_state* state() {
  static backtrace_state* const s =
      backtrace_create_state(nullptr, /*threaded=*/1, ignore_error, nullptr);
  return s;
}

std::string demangled(const char* name) {
  return name != nullptr ? ::bubble::detail::demangle(name) : std::string();
}

int add_frame(void* data, std::uintptr_t /*pc*/, const char* file, int line, const char* function) {
  if (file == nullptr && function == nullptr) return 0;  // No debug information here.
  static_cast<std::vector<StackFrame>*>(data)->push_back(
      {demangled(function), file != nullptr ? file : "",
       line > 0 ? static_cast<std::size_t>(line) : 0});
  return 0;
}

void add_symbol(void* data, std::uintptr_t /*pc*/, const char* symbol, std::uintptr_t /*value*/,
                std::uintptr_t /*size*/) {
  static_cast<std::vector<StackFrame>*>(data)->push_back({demangled(symbol), "", 0});
}

}  // namespace

StackSymbolizer stack_symbolizer() {
  return [](const std::vector<const void*>& addresses) {
    std::vector<StackFrame> frames;
    backtrace_state* s = state();
    for (const void* address : addresses) {
      // A return address points after the call; the call is one byte earlier, which is where its
      // source line (and the functions inlined there) are.
      const auto pc = reinterpret_cast<std::uintptr_t>(address) - 1;
      const std::size_t before = frames.size();
      if (s != nullptr) backtrace_pcinfo(s, pc, add_frame, ignore_error, &frames);
      if (frames.size() == before && s != nullptr) {
        backtrace_syminfo(s, pc, add_symbol, ignore_error, &frames);
      }
      if (frames.size() == before) frames.push_back({});
    }
    return frames;
  };
}

}  // namespace bubble::testing
