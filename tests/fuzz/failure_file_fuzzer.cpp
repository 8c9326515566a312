// Fuzzes the reader of failure files (`bubble replay FILE`: a JSON object of the format
// "bubble-failure-1"), bubble::cli::parse_failure_file.
//
// Properties: a text either is a failure file or is rejected with bubble::cli::OptionError naming
// the file (any other exception escapes and stops the fuzzer); a property's failure file that
// parses writes (failure_json) a file that parses to the same fields; a test's has its test,
// strategy and command.
#include <cstddef>
#include <cstdint>
#include <string>

#include "failure_file.hpp"
#include "fuzz_support.hpp"
#include "option_error.hpp"

namespace {

constexpr const char* kPath = "fuzz.json";

bool same_property(const bubble::scenarios::PropertyFailure& a,
                   const bubble::scenarios::PropertyFailure& b) {
  return a.suite == b.suite && a.property == b.property && a.seed == b.seed && a.cases == b.cases &&
         a.reproduce == b.reproduce && a.schedule == b.schedule && a.message == b.message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using bubble::fuzz::require;
  const std::string text = bubble::fuzz::text_of(data, size);
  bubble::cli::FailureFile file;
  try {
    file = bubble::cli::parse_failure_file(text, kPath);
  } catch (const bubble::cli::OptionError& e) {
    require(std::string(e.what()).rfind(std::string(kPath) + ": ", 0) == 0,
            "a rejection names the file", e.what());
    return 0;
  }
  require(file.kind == "property" || file.kind == "test", "kind is property or test", file.kind);
  if (file.kind == "test") return 0;
  require(file.property.cases >= 1 && file.message == file.property.message,
          "a property's failure has cases and its message", text);
  const std::string written = bubble::cli::failure_json(file.property);
  bubble::cli::FailureFile again;
  try {
    again = bubble::cli::parse_failure_file(written, kPath);
  } catch (const bubble::cli::OptionError& e) {
    require(false, "a written failure file parses", written + ": " + e.what());
  }
  require(again.kind == "property" && same_property(again.property, file.property),
          "failure_json(parse(f)) parses to the same failure", written);
  return 0;
}
