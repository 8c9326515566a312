#pragma once

// Helpers for tests that read the failure reports of bubble runs: run a program and take the
// text it failed with, find a report's lines, and write locations as reports print them.

#include <cstddef>
#include <sstream>
#include <string>

#include <bubble/bubble.hpp>

namespace bubble::test_support {

// The text of the RunFailure (a DeadlockError included) that running `program` in a bubble with
// `options` ends with; "(no failure)" if the run succeeds.
template <class Program>
std::string failure_of(Program program, const Options& options = {}) {
  try {
    run(options, program);
  } catch (const RunFailure& e) {
    return e.what();
  }
  return "(no failure)";
}

// The text of the DeadlockError that running `program` in a bubble ends with; "(no deadlock)"
// if the run succeeds. Any other failure propagates.
template <class Program>
std::string deadlock_of(Program program) {
  try {
    run({}, program);
  } catch (const DeadlockError& e) {
    return e.what();
  }
  return "(no deadlock)";
}

// "file:line" of `where`, as reports print locations.
inline std::string at(SourceLocation where) {
  return std::string(where.file_name()) + ":" + std::to_string(where.line());
}

// The first line of `text` that starts with `prefix`, whole; "" if none.
inline std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return {};
}

// The same line up to " at " (where a report line gives its location); "" if none.
inline std::string line_without_location(const std::string& text, const std::string& prefix) {
  const std::string line = line_starting(text, prefix);
  return line.substr(0, line.find(" at "));
}

// Whether `part` occurs anywhere in `s`.
inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Whether `s` ends with `end`.
inline bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

}  // namespace bubble::test_support
