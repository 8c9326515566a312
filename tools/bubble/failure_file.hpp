#pragma once

#include <bubble/scenarios/registry.hpp>

#include <cstdint>
#include <string>
#include <string_view>

// Failure files: what `bubble run` writes for a failed property and a BUBBLE_TEST writes when
// BUBBLE_FAILURE_FILE is set, and what `bubble replay` reads. A failure file is one JSON object:
//
//   {"format": "bubble-failure-1", "kind": "property", "suite": "exhibits",
//    "property": "...", "seed": 5, "cases": 1000, "reproduce": "<RapidCheck reproduce string>",
//    "schedule": "choices:0,1", "message": "..."}
//
// or, for a BUBBLE_TEST, "kind": "test" with "test" (Suite.Name), "strategy" (the failing run's
// strategy), "command" (the command line that reproduces the run) and "message".
namespace bubble::cli {

inline constexpr const char* kFailureFormat = "bubble-failure-1";

// A failure file's content.
struct FailureFile {
  std::string kind;  // "property" or "test"
  // kind "property": a scenarios::PropertyFailure (its trace is not stored).
  scenarios::PropertyFailure property;
  // kind "test": the test's name, its strategy and the command that reproduces it.
  std::string test;
  std::string strategy;
  std::string command;
  std::string message;  // kind "test" (for "property": property.message)
};

// The JSON text of a property's failure file.
std::string failure_json(const scenarios::PropertyFailure& failure);

// Writes `failure` to `path`; throws OptionError naming `option` and the path when it cannot.
void write_failure_file(const std::string& option, const std::string& path,
                        const scenarios::PropertyFailure& failure);

// Reads the failure file at `path`. Throws OptionError ("<path>: <what is wrong>") when it cannot
// be read, is not JSON, or lacks a field of its kind.
FailureFile read_failure_file(const std::string& path);

// The failure file whose content is `text`, read from `path` (named in errors only). Throws
// OptionError ("<path>: <what is wrong>") when it is not JSON or lacks a field of its kind.
FailureFile parse_failure_file(std::string_view text, const std::string& path);

}  // namespace bubble::cli
