#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include <bubble/sim/parse.hpp>

namespace bubble::cli {

// Bad usage of a subcommand, already naming the option and its value ("--workers 0: expected an
// integer >= 1"). The subcommand prints it after its name and exits with status 2.
class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Calls parse(value) and turns a bubble::sim::UsageError into an OptionError naming `option`.
template <class Parse>
auto parse_option(std::string_view option, const std::string& value, Parse&& parse) {
  try {
    return std::forward<Parse>(parse)(std::string_view(value));
  } catch (const sim::UsageError& e) {
    throw OptionError(fmt::format("{} {}: expected {}", option, value, e.expected()));
  }
}

}  // namespace bubble::cli
