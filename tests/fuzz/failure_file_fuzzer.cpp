// Fuzzes failure files (`bubble replay FILE`: a JSON object of the format "bubble-failure-1"): the
// command's reader, bubble::cli::parse_failure_file, on the whole input, and the testing glue's
// writer, bubble::testing::failure_file_json, on a test name, a command and a message made of the
// input's first line, second line and rest.
//
// Properties: a text either is a failure file or is rejected with bubble::cli::OptionError naming
// the file (any other exception escapes and stops the fuzzer); a property's failure file that
// parses writes (failure_json) a file that parses to the same fields. Whatever a BUBBLE_TEST's
// name, command and message, the file the testing glue writes is one the command reads, with the
// same strategy and, when they are valid UTF-8 (JSON's encoding), the same name, command and
// message.
#include <bubble/strategy.hpp>
#include <bubble/testing/explore.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

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

// True when `text` is valid UTF-8 (nlohmann::json refuses to write anything else).
bool valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

void check_writer(const std::string& text) {
  std::string_view rest = text;
  const std::string test(bubble::fuzz::next_part(rest, '\n'));
  const std::string command(bubble::fuzz::next_part(rest, '\n'));
  const std::string message(rest);
  bubble::testing::ExploreOutcome outcome;
  outcome.failed = true;
  outcome.failed_strategy = bubble::Strategy::pct(7, 3, 120);
  outcome.replay_line = "replay: " + command;
  outcome.message = message;
  const std::string written = bubble::testing::failure_file_json(test, outcome);
  bubble::cli::FailureFile file;
  try {
    file = bubble::cli::parse_failure_file(written, kPath);
  } catch (const bubble::cli::OptionError& e) {
    bubble::fuzz::require(false, "the failure file a test writes is one `bubble replay` reads",
                          written + "\n" + e.what());
  }
  bubble::fuzz::require(file.kind == "test" && file.strategy == "pct:7:3:120",
                        "a test's failure file has its kind and strategy", written);
  for (const auto& [read, wrote] :
       {std::pair{&file.test, &test}, std::pair{&file.command, &command},
        std::pair{&file.message, &message}}) {
    if (valid_utf8(*wrote)) {
      bubble::fuzz::require(*read == *wrote, "a test's failure file keeps its UTF-8 text", written);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using bubble::fuzz::require;
  const std::string text = bubble::fuzz::text_of(data, size);
  check_writer(text);
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
