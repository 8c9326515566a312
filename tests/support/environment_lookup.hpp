#pragma once

// A stand-in for the process's environment in tests of what BUBBLE_* variables do.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <bubble/testing/test_plan.hpp>

namespace bubble::test_support {

// An EnvLookup that finds a variable in `variables` (name to value) and nothing else.
inline testing::EnvLookup lookup(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace bubble::test_support
