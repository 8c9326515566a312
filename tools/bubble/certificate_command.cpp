// `bubble certificate merge FILE...`: the certificate of a whole exhaustive search from those of
// its shards.
#include <bubble/schedule_tree.hpp>

#include <fmt/core.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_error.hpp"

namespace bubble::cli {
namespace {

constexpr const char* kCertificateFooter = R"(Examples:
  BUBBLE_EXHAUSTIVE=2 BUBBLE_SCHEDULE_SHARD_INDEX=$i BUBBLE_SCHEDULE_TOTAL_SHARDS=4 \
    ./my_tests --gtest_filter=Queue.Drains > shard-$i.log      (on each of 4 machines)
  bubble certificate merge shard-0.log shard-1.log shard-2.log shard-3.log

Every line of the files that starts with "bubble: complete: " is a certificate (so whole test
logs can be given; "-" reads standard input). Prints the certificate of the whole search:
"bubble: complete: 41,234 schedules with at most 2 preemptions, 0 failed". Exit status: 0 when
the merged search found no failure, 1 when it found some, 2 when the certificates are not those
of every shard of one search (a shard missing or given twice, another bound) or a file cannot be
read.)";

// The certificate lines of `path` ("-": standard input).
std::vector<std::string> certificate_lines(const std::string& path) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) throw OptionError(fmt::format("{}: cannot read the file", path));
    in = &file;
  }
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(*in, line)) {
    if (line.rfind("bubble: complete: ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

}  // namespace

void add_certificate_command(CLI::App& app, int& exit_code) {
  CLI::App* certificate =
      app.add_subcommand("certificate", "Work with the certificates of exhaustive searches");
  certificate->require_subcommand(1);
  CLI::App* merge = certificate->add_subcommand(
      "merge", "Merge the certificates of every shard of a search into the whole search's");
  merge->footer(kCertificateFooter);
  auto files = std::make_shared<std::vector<std::string>>();
  merge->add_option("files", *files, "Files (or - for standard input) holding the certificates")
      ->required();
  merge->callback([files, &exit_code] {
    std::vector<std::string> lines;
    for (const std::string& path : *files) {
      for (std::string& line : certificate_lines(path)) lines.push_back(std::move(line));
    }
    std::string whole;
    try {
      whole = merge_certificates(lines);
    } catch (const std::invalid_argument& e) {
      throw OptionError(e.what());
    }
    fmt::print("{}\n", whole);
    exit_code = whole.ends_with(", 0 failed") ? 0 : 1;
  });
}

}  // namespace bubble::cli
