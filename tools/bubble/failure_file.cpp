#include "failure_file.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "option_error.hpp"

namespace bubble::cli {

std::string failure_json(const scenarios::PropertyFailure& failure) {
  const nlohmann::ordered_json j = {
      {"format", kFailureFormat},       {"kind", "property"},
      {"suite", failure.suite},         {"property", failure.property},
      {"seed", failure.seed},           {"cases", failure.cases},
      {"reproduce", failure.reproduce}, {"schedule", failure.schedule},
      {"message", failure.message},
  };
  return j.dump(2) + "\n";
}

void write_failure_file(const std::string& option, const std::string& path,
                        const scenarios::PropertyFailure& failure) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << failure_json(failure);
  out.close();
  if (!out) throw OptionError(fmt::format("{} {}: cannot write the file", option, path));
}

namespace {

std::string string_field(const nlohmann::json& j, const std::string& path, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_string()) {
    throw OptionError(fmt::format("{}: not a failure file: no string field \"{}\"", path, name));
  }
  return it->get<std::string>();
}

}  // namespace

FailureFile read_failure_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw OptionError(fmt::format("{}: cannot read the file", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_failure_file(text.str(), path);
}

FailureFile parse_failure_file(std::string_view text, const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw OptionError(fmt::format("{}: not a failure file: not a JSON object", path));
  }
  if (string_field(j, path, "format") != kFailureFormat) {
    throw OptionError(
        fmt::format("{}: not a failure file: format is not \"{}\"", path, kFailureFormat));
  }
  FailureFile file;
  file.kind = string_field(j, path, "kind");
  if (file.kind == "property") {
    scenarios::PropertyFailure& f = file.property;
    f.suite = string_field(j, path, "suite");
    f.property = string_field(j, path, "property");
    f.reproduce = string_field(j, path, "reproduce");
    f.schedule = string_field(j, path, "schedule");
    f.message = string_field(j, path, "message");
    const auto seed = j.find("seed");
    const auto cases = j.find("cases");
    if (seed == j.end() || !seed->is_number_unsigned() || cases == j.end() ||
        !cases->is_number_unsigned() || cases->get<std::uint64_t>() < 1 ||
        cases->get<std::uint64_t>() > 1'000'000'000) {
      throw OptionError(
          fmt::format("{}: not a failure file: \"seed\" and \"cases\" must be counts", path));
    }
    f.seed = seed->get<std::uint64_t>();
    f.cases = static_cast<int>(cases->get<std::uint64_t>());
    file.message = f.message;
  } else if (file.kind == "test") {
    file.test = string_field(j, path, "test");
    file.strategy = string_field(j, path, "strategy");
    file.command = string_field(j, path, "command");
    file.message = string_field(j, path, "message");
  } else {
    throw OptionError(
        fmt::format("{}: not a failure file: kind \"{}\" is neither \"property\" nor \"test\"",
                    path, file.kind));
  }
  return file;
}

}  // namespace bubble::cli
