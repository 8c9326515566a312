// Fuzzes bubble::Strategy::parse, the parser behind BUBBLE_STRATEGY and replay lines.
//
// Properties: a text either parses or is rejected with std::invalid_argument (any other exception
// escapes and stops the fuzzer); a strategy that parses prints (to_string) to a text that parses
// to the same strategy and prints identically; a parsed PCT strategy has depth >= 1 and steps >= 1.
#include <bubble/strategy.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using bubble::Strategy;
  using bubble::fuzz::require;
  const std::string text = bubble::fuzz::text_of(data, size);
  Strategy strategy;
  try {
    strategy = Strategy::parse(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const std::string printed = strategy.to_string();
  Strategy again;
  try {
    again = Strategy::parse(printed);
  } catch (const std::invalid_argument& e) {
    require(false, "to_string() of a parsed strategy parses", printed + ": " + e.what());
  }
  require(again == strategy, "parse(to_string(s)) == s", text + " -> " + printed);
  require(again.to_string() == printed, "to_string is stable", printed);
  if (strategy.kind() == Strategy::Kind::pct) {
    require(strategy.depth() >= 1 && strategy.steps() >= 1, "pct depth and steps >= 1", printed);
  }
  return 0;
}
