#include <bubble/limiter/token_bucket_replay.hpp>

#include <bubble/limiter/token_bucket_core.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubble {
namespace {

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

template <class Int>
bool parse_int(std::string_view text, Int& value) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;  // from_chars does not accept a leading '+'
  const auto [ptr, ec] = std::from_chars(first, last, value);
  return ec == std::errc{} && ptr == last && first != last;
}

[[noreturn]] void fail(std::size_t line_number, const std::string& what) {
  throw std::invalid_argument("line " + std::to_string(line_number) + ": " + what);
}

}  // namespace

double parse_rate(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity") {
    return kInfiniteRate;
  }
  const std::string s(text);
  char* end = nullptr;
  const double value = s.empty() ? std::nan("") : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || std::isnan(value) || value < 0 ||
      lower.find("inf") != std::string::npos) {
    throw std::invalid_argument("bad rate \"" + s +
                                "\": expected a number of tokens per second >= 0, or inf");
  }
  return value;
}

std::size_t replay_decisions(std::istream& in, std::ostream& out, double rate, int burst) {
  TokenBucketCore bucket(rate, burst);
  std::size_t requests = 0;
  std::size_t line_number = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields.empty() || fields[0].front() == '#') continue;
    if (fields.size() != 3) {
      fail(line_number, "expected \"<t_ns> allow|reserve <n>\", got \"" + line + "\"");
    }
    std::int64_t t_ns = 0;
    if (!parse_int(fields[0], t_ns)) {
      fail(line_number, "bad time \"" + std::string(fields[0]) +
                            "\": expected an integer number of nanoseconds");
    }
    int n = 0;
    if (!parse_int(fields[2], n) || n < 0) {
      fail(line_number, "bad n \"" + std::string(fields[2]) + "\": expected an integer >= 0");
    }
    const TimePoint t{Duration(t_ns)};
    if (fields[1] == "allow") {
      out << (bucket.allow_at(t, n) ? "true" : "false") << '\n';
    } else if (fields[1] == "reserve") {
      const TokenReservation r = bucket.reserve_at(t, n);
      out << (r.ok ? "true " : "false ") << r.delay_from(t).count() << '\n';
    } else {
      fail(line_number,
           "unknown operation \"" + std::string(fields[1]) + "\": expected allow or reserve");
    }
    ++requests;
  }
  return requests;
}

}  // namespace bubble
