#pragma once

// What every harness of tests/fuzz shares: the input as text, and property checks that stop the
// fuzzer with a message.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace bubble::fuzz {

// The fuzzer's input as a string (any bytes, NULs included).
inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Stops the fuzzer (abort, which libFuzzer reports as a crash with its reproducer) when a property
// does not hold: `what` says which property, `detail` the values involved.
inline void require(bool holds, std::string_view what, std::string_view detail = {}) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property violated: %.*s\n  %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// Splits off the text of `rest` up to the first `separator` (all of it if there is none).
inline std::string_view next_part(std::string_view& rest, char separator) {
  const std::size_t at = rest.find(separator);
  const std::string_view part = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view{} : rest.substr(at + 1);
  return part;
}

}  // namespace bubble::fuzz
