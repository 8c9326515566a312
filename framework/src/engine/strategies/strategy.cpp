#include <bubble/schedule.hpp>
#include <bubble/strategy.hpp>

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/strategies/scheduler.hpp"

namespace bubble {
namespace {

[[noreturn]] void bad_strategy(std::string_view text, std::string_view why) {
  throw std::invalid_argument("bubble::Strategy::parse: bad strategy \"" + std::string(text) +
                              "\": " + std::string(why) +
                              " (expected fifo, random:<seed>, pct:<seed>:<depth>[:<steps>] or "
                              "choices:<i>,<j>,...)");
}

bool parse_u64(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// Parses "1,2,3"; returns false on a bad element.
bool parse_picks(std::string_view s, std::vector<std::uint32_t>& out) {
  s = trim(s);
  if (s.empty()) return true;
  while (true) {
    const std::size_t comma = s.find(',');
    const std::string_view item = trim(s.substr(0, comma));
    std::uint64_t v = 0;
    if (!parse_u64(item, v) || v > 0xffffffffULL) return false;
    out.push_back(static_cast<std::uint32_t>(v));
    if (comma == std::string_view::npos) return true;
    s.remove_prefix(comma + 1);
  }
}

std::string picks_to_string(const std::vector<std::uint32_t>& picks) {
  std::string out;
  for (std::size_t i = 0; i < picks.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(picks[i]);
  }
  return out;
}

}  // namespace

Strategy Strategy::random(std::uint64_t seed) {
  Strategy s;
  s.kind_ = Kind::random;
  s.seed_ = seed;
  return s;
}

Strategy Strategy::pct(std::uint64_t seed, int depth, std::uint64_t steps) {
  if (depth < 1) {
    throw std::invalid_argument("bubble::Strategy::pct: depth must be >= 1, got " +
                                std::to_string(depth));
  }
  if (steps < 1) throw std::invalid_argument("bubble::Strategy::pct: steps must be >= 1, got 0");
  Strategy s;
  s.kind_ = Kind::pct;
  s.seed_ = seed;
  s.depth_ = depth;
  s.steps_ = steps;
  return s;
}

Strategy Strategy::pct(std::uint64_t seed, int depth) {
  Strategy s = pct(seed, depth, kDefaultPctSteps);
  s.adaptive_steps_ = true;
  return s;
}

Strategy Strategy::choices(std::vector<std::uint32_t> picks) {
  Strategy s;
  s.kind_ = Kind::choices;
  s.picks_ = std::move(picks);
  return s;
}

Strategy Strategy::parse(std::string_view text) {
  const std::string_view t = trim(text);
  const std::size_t colon = t.find(':');
  const std::string_view head = t.substr(0, colon);
  const std::string_view rest =
      colon == std::string_view::npos ? std::string_view{} : t.substr(colon + 1);
  if (head == "fifo") {
    if (colon != std::string_view::npos) bad_strategy(text, "fifo takes no arguments");
    return fifo();
  }
  if (head == "random") {
    std::uint64_t seed = 0;
    if (!parse_u64(rest, seed)) bad_strategy(text, "the seed must be an unsigned integer");
    return random(seed);
  }
  if (head == "pct") {
    std::vector<std::string_view> parts;
    std::string_view r = rest;
    while (true) {
      const std::size_t c = r.find(':');
      parts.push_back(r.substr(0, c));
      if (c == std::string_view::npos) break;
      r.remove_prefix(c + 1);
    }
    if (parts.size() < 2 || parts.size() > 3)
      bad_strategy(text, "pct needs <seed>:<depth>[:<steps>]");
    std::uint64_t seed = 0;
    std::uint64_t depth = 0;
    std::uint64_t steps = 0;
    if (!parse_u64(parts[0], seed)) bad_strategy(text, "the seed must be an unsigned integer");
    if (!parse_u64(parts[1], depth) || depth < 1 || depth > 1000) {
      bad_strategy(text, "the depth must be an integer in [1, 1000]");
    }
    if (parts.size() == 2) return pct(seed, static_cast<int>(depth));
    if (!parse_u64(parts[2], steps) || steps < 1) {
      bad_strategy(text, "the step estimate must be an integer >= 1");
    }
    return pct(seed, static_cast<int>(depth), steps);
  }
  if (head == "choices") {
    std::vector<std::uint32_t> picks;
    if (!parse_picks(rest, picks)) bad_strategy(text, "picks must be unsigned 32-bit integers");
    return choices(std::move(picks));
  }
  bad_strategy(text, "unknown strategy");
}

std::string Strategy::to_string() const {
  switch (kind_) {
    case Kind::fifo:
      return "fifo";
    case Kind::random:
      return "random:" + std::to_string(seed_);
    case Kind::pct:
      return "pct:" + std::to_string(seed_) + ":" + std::to_string(depth_) +
             (adaptive_steps_ ? std::string{} : ":" + std::to_string(steps_));
    case Kind::choices:
      return "choices:" + picks_to_string(picks_);
  }
  return "fifo";
}

std::string Schedule::to_string() const {
  return picks_to_string(picks);
}

Schedule Schedule::parse(std::string_view text) {
  Schedule s;
  if (!parse_picks(text, s.picks)) {
    throw std::invalid_argument("bubble::Schedule::parse: bad schedule \"" + std::string(text) +
                                "\": expected comma-separated unsigned 32-bit integers");
  }
  while (!s.picks.empty() && s.picks.back() == 0) s.picks.pop_back();
  s.decisions = s.picks.size();
  return s;
}

namespace engine {

std::unique_ptr<Scheduler> make_scheduler(const Strategy& strategy) {
  switch (strategy.kind()) {
    case Strategy::Kind::fifo:
      break;
    case Strategy::Kind::random:
      return make_random_scheduler(strategy);
    case Strategy::Kind::pct:
      return make_pct_scheduler(strategy);
    case Strategy::Kind::choices:
      return make_choices_scheduler(strategy);
  }
  return make_fifo_scheduler();
}

}  // namespace engine

}  // namespace bubble
