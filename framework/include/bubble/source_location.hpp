#pragma once

#include <cstdint>

namespace bubble {

// SourceLocation names a place in the program: the file, line and function of a call.
//
// Blocking calls take one as a defaulted last argument, so that deadlock reports and traces can
// say where each thread blocked. It plays the role of std::source_location, which clang 14 with
// libstdc++ cannot provide; it is built on the __builtin_FILE/LINE/FUNCTION intrinsics that both
// g++ and clang evaluate at the call site when used as default arguments.
class SourceLocation {
 public:
  // Returns the location of the call site when used as a default argument.
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          std::uint_least32_t line = __builtin_LINE(),
                                          const char* function = __builtin_FUNCTION()) noexcept {
    SourceLocation loc;
    loc.file_ = file;
    loc.line_ = line;
    loc.function_ = function;
    return loc;
  }

  constexpr SourceLocation() noexcept = default;

  // The source file's path as the compiler saw it; "" for a default-constructed location.
  constexpr const char* file_name() const noexcept { return file_; }
  // The line number; 0 for a default-constructed location.
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  // The enclosing function's name; "" for a default-constructed location.
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  std::uint_least32_t line_ = 0;
  const char* function_ = "";
};

}  // namespace bubble
