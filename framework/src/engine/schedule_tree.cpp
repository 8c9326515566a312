#include <bubble/schedule_tree.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/reduction/races.hpp"
#include "engine/report/thread_report.hpp"

namespace bubble {

ScheduleTree::ScheduleTree(std::uint32_t max_preemptions, TreeShard shard, Reduction reduction)
    : max_preemptions_(max_preemptions), shard_(shard), reduction_(reduction) {
  if (shard.total == 0 || shard.index >= shard.total) {
    throw std::invalid_argument("bubble::ScheduleTree: shard " + std::to_string(shard.index) + "/" +
                                std::to_string(shard.total) +
                                " does not exist (the index must be < the total, which must be "
                                ">= 1)");
  }
}

bool ScheduleTree::owns_key(std::vector<std::uint32_t> picks) const {
  if (shard_.total == 1) return true;
  if (picks.size() > kShardDepth) picks.resize(kShardDepth);
  while (!picks.empty() && picks.back() == 0) picks.pop_back();
  // FNV-1a over the picks: the same shard for the same picks on every platform.
  std::uint64_t hash = 14695981039346656037ULL;
  for (const std::uint32_t pick : picks) {
    for (int byte = 0; byte < 4; ++byte) {
      hash ^= (pick >> (8 * byte)) & 0xffU;
      hash *= 1099511628211ULL;
    }
  }
  return hash % shard_.total == shard_.index;
}

bool ScheduleTree::owns(const std::vector<Decision>& decisions) const {
  if (shard_.total == 1) return true;  // Every run of an unsharded search, without a copy.
  std::vector<std::uint32_t> picks;
  for (std::size_t i = 0; i < decisions.size() && i < kShardDepth; ++i) {
    picks.push_back(decisions[i].picked);
  }
  return owns_key(std::move(picks));
}

std::optional<Strategy> ScheduleTree::next() const {
  if (done_) return std::nullopt;
  std::vector<std::uint32_t> picks;
  picks.reserve(path_.size());
  for (const Decision& d : path_) picks.push_back(d.picked);
  while (!picks.empty() && picks.back() == 0) picks.pop_back();
  return Strategy::choices(std::move(picks));
}

void ScheduleTree::record(const std::vector<Decision>& decisions,
                          const RunDependencies* dependencies) {
  if (done_) throw std::logic_error("bubble::ScheduleTree::record: the search is already done");
  if (reduction_ == Reduction::dpor && dependencies == nullptr) {
    throw std::invalid_argument(
        "bubble::ScheduleTree::record: a search with Reduction::dpor needs each run's "
        "dependencies (Options::dependencies), and none were given");
  }
  if (decisions.size() < path_.size()) {
    throw std::logic_error(
        "bubble: the exhaustive search cannot go on: the program is not deterministic (a run "
        "given " +
        std::to_string(path_.size()) + " picks took only " + std::to_string(decisions.size()) +
        " decisions, where the same picks took at least " + std::to_string(path_.size()) +
        " before)");
  }
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (decisions[i].candidates != path_[i].candidates ||
        decisions[i].preemptive != path_[i].preemptive || decisions[i].picked != path_[i].picked) {
      throw std::logic_error(
          "bubble: the exhaustive search cannot go on: the program is not deterministic "
          "(decision #" +
          std::to_string(i + 1) + " had " + std::to_string(decisions[i].candidates) +
          " candidates, where the same picks gave " + std::to_string(path_[i].candidates) +
          " before)");
    }
  }
  if (owns(decisions)) {
    ++schedules_;
  } else {
    ++transit_;
  }
  // Preemptions taken before each decision of this run.
  std::vector<std::uint32_t>& before = preemptions_before_;
  before.assign(decisions.size() + 1, 0);
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    before[i + 1] = before[i] + ((d.preemptive && d.picked != 0) ? 1 : 0);
  }
  if (reduction_ == Reduction::dpor) {
    record_reduced(decisions, *dependencies);
    return;
  }
  // The deepest decision with a candidate after the one taken that stays within the bound.
  for (std::size_t i = decisions.size(); i-- > 0;) {
    if (const std::optional<std::uint32_t> pick = next_pick(decisions, i, before[i], nullptr)) {
      path_.assign(decisions.begin(), decisions.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      path_.back().picked = *pick;
      return;
    }
  }
  path_.clear();
  done_ = true;
}

std::optional<std::uint32_t> ScheduleTree::next_pick(const std::vector<Decision>& decisions,
                                                     std::size_t i,
                                                     std::uint32_t preemptions_before,
                                                     const std::uint8_t* state) const {
  const Decision& d = decisions[i];
  // A branch at depth kShardDepth - 1 or deeper fixes the first kShardDepth picks of its whole
  // subtree, and so its shard: another shard's is skipped.
  const bool keyed = shard_.total > 1 && i + 1 >= kShardDepth;
  std::vector<std::uint32_t> key;
  if (keyed) {
    for (std::size_t j = 0; j <= i && j < kShardDepth; ++j) key.push_back(decisions[j].picked);
    if (i >= kShardDepth && !owns_key(key)) return std::nullopt;
  }
  // Without states, the candidates after the one taken, in order.
  for (std::uint32_t pick = state != nullptr ? 0 : d.picked + 1; pick < d.candidates; ++pick) {
    if (state != nullptr && state[pick] != 1) continue;
    // Every candidate but the first preempts at a preemptive decision.
    if (preemptions_before + ((d.preemptive && pick != 0) ? 1 : 0) > max_preemptions_) continue;
    if (keyed && i < kShardDepth) {
      key.back() = pick;
      if (!owns_key(key)) continue;
    }
    return pick;
  }
  return std::nullopt;
}

void ScheduleTree::record_reduced(const std::vector<Decision>& decisions,
                                  const RunDependencies& dependencies) {
  among_threads_.assign(decisions.size(), 0);
  for (const RunDependencies::ThreadChoice& c : dependencies.choices) {
    if (c.decision < decisions.size()) among_threads_[c.decision] = 1;
  }
  // The run's new decisions: only the candidate taken is tried, unless it is a decision whose
  // candidates are all tried (among timers or select cases, or above a shard's depth).
  for (std::size_t i = state_begin_.size(); i < decisions.size(); ++i) {
    const bool reduced = among_threads_[i] != 0 && (shard_.total == 1 || i >= kShardDepth);
    state_begin_.push_back(states_.size());
    states_.resize(states_.size() + decisions[i].candidates, reduced ? 0 : 1);
    states_[state_begin_[i] + decisions[i].picked] = 2;
  }
  for (const engine::Backtrack& b : engine::find_backtracks(decisions, dependencies)) {
    std::uint8_t* const state = &states_[state_begin_[b.decision]];
    if (b.candidate == engine::Backtrack::kEveryCandidate) {
      for (std::uint32_t c = 0; c < decisions[b.decision].candidates; ++c) {
        if (state[c] == 0) state[c] = 1;
      }
    } else if (state[b.candidate] == 0) {
      state[b.candidate] = 1;
    }
  }
  for (std::size_t i = decisions.size(); i-- > 0;) {
    if (const std::optional<std::uint32_t> pick =
            next_pick(decisions, i, preemptions_before_[i], &states_[state_begin_[i]])) {
      path_.assign(decisions.begin(), decisions.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      path_.back().picked = *pick;
      states_.resize(state_begin_[i] + decisions[i].candidates);
      state_begin_.resize(i + 1);
      states_[state_begin_[i] + *pick] = 2;
      return;
    }
  }
  path_.clear();
  states_.clear();
  state_begin_.clear();
  done_ = true;
}

double ScheduleTree::estimated_done() const noexcept {
  if (done_) return 1.0;
  double done = 0.0;
  double share = 1.0;      // Of the whole tree, the part under the current decision.
  std::uint32_t used = 0;  // Preemptions before the current decision.
  for (const Decision& d : path_) {
    // A preemptive decision with no preemption left has one branch to search.
    if (d.preemptive && used >= max_preemptions_) continue;
    share /= d.candidates;
    done += share * d.picked;
    if (d.preemptive && d.picked != 0) ++used;
  }
  return done;
}

namespace {

constexpr std::string_view kCheckpointFormat = "bubble-schedule-tree-1";
// A reduced search's checkpoint: a reduction field, and each decision's candidates' states.
constexpr std::string_view kReducedCheckpointFormat = "bubble-schedule-tree-2";

[[noreturn]] void bad_checkpoint(std::string_view text, const std::string& why) {
  throw std::invalid_argument("bubble::ScheduleTree::resume: \"" + std::string(text) +
                              "\" is not a checkpoint: " + why);
}

// Parses a decimal number of type T that must make up all of `digits`.
template <class T>
bool parse_number(std::string_view digits, T& out) {
  const char* const end = digits.data() + digits.size();
  const auto [at, error] = std::from_chars(digits.data(), end, out);
  return error == std::errc{} && at == end && !digits.empty();
}

// Splits off the next field of `text` up to `separator` (all of it if there is none).
std::string_view next_field(std::string_view& text, char separator) {
  const std::size_t at = text.find(separator);
  const std::string_view field = text.substr(0, at);
  text = at == std::string_view::npos ? std::string_view{} : text.substr(at + 1);
  return field;
}

}  // namespace

std::string ScheduleTree::checkpoint() const {
  const bool reduced = reduction_ == Reduction::dpor;
  std::string out = std::string(reduced ? kReducedCheckpointFormat : kCheckpointFormat) +
                    " bound=" + std::to_string(max_preemptions_) +
                    " shard=" + std::to_string(shard_.index) + "/" + std::to_string(shard_.total) +
                    (reduced ? " reduction=dpor" : "") +
                    " schedules=" + std::to_string(schedules_) +
                    " transit=" + std::to_string(transit_) + " path=";
  if (done_) return out + "done";
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(path_[i].candidates) + ":" + std::to_string(path_[i].picked);
    if (path_[i].preemptive) out += 'p';
    if (reduced) {
      out += '/';
      for (std::uint32_t c = 0; c < path_[i].candidates; ++c) {
        out += static_cast<char>('0' + states_[state_begin_[i] + c]);
      }
    }
  }
  return out;
}

ScheduleTree ScheduleTree::resume(std::string_view checkpoint) {
  std::string_view rest = checkpoint;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  const std::string_view format = next_field(rest, ' ');
  if (format != kCheckpointFormat && format != kReducedCheckpointFormat) {
    bad_checkpoint(checkpoint, "it does not start with \"" + std::string(kCheckpointFormat) +
                                   "\" or \"" + std::string(kReducedCheckpointFormat) + "\"");
  }
  const bool reduced = format == kReducedCheckpointFormat;
  const auto field = [&](std::string_view name) {
    const std::string_view f = next_field(rest, ' ');
    if (f.substr(0, name.size()) != name) {
      bad_checkpoint(checkpoint, "expected \"" + std::string(name) + "...\"");
    }
    return f.substr(name.size());
  };
  std::uint32_t bound = 0;
  if (!parse_number(field("bound="), bound)) bad_checkpoint(checkpoint, "bad bound");
  std::string_view shard_text = field("shard=");
  TreeShard shard;
  if (!parse_number(next_field(shard_text, '/'), shard.index) ||
      !parse_number(shard_text, shard.total) || shard.total == 0 || shard.index >= shard.total) {
    bad_checkpoint(checkpoint, "bad shard (index/total, index < total)");
  }
  if (reduced && field("reduction=") != "dpor") bad_checkpoint(checkpoint, "bad reduction");
  ScheduleTree tree(bound, shard, reduced ? Reduction::dpor : Reduction::none);
  if (!parse_number(field("schedules="), tree.schedules_)) {
    bad_checkpoint(checkpoint, "bad count of schedules");
  }
  if (!parse_number(field("transit="), tree.transit_)) {
    bad_checkpoint(checkpoint, "bad count of transit runs");
  }
  std::string_view path = field("path=");
  if (!rest.empty()) bad_checkpoint(checkpoint, "text after the path");
  if (path == "done") {
    tree.done_ = true;
    return tree;
  }
  std::uint32_t preemptions = 0;
  while (!path.empty()) {
    std::string_view item = next_field(path, ',');
    Decision d;
    std::string_view states;
    if (reduced) {
      const std::size_t slash = item.find('/');
      if (slash == std::string_view::npos) {
        bad_checkpoint(checkpoint, "a decision without its candidates' states (\"3:1/221\")");
      }
      states = item.substr(slash + 1);
      item = item.substr(0, slash);
    }
    if (!item.empty() && item.back() == 'p') {
      d.preemptive = true;
      item.remove_suffix(1);
    }
    if (!parse_number(next_field(item, ':'), d.candidates) || !parse_number(item, d.picked) ||
        d.candidates < 2 || d.picked >= d.candidates) {
      bad_checkpoint(checkpoint, "bad decision in the path (candidates:pick, pick < candidates)");
    }
    preemptions += (d.preemptive && d.picked != 0) ? 1 : 0;
    tree.path_.push_back(d);
    if (reduced) {
      if (states.size() != d.candidates ||
          !std::all_of(states.begin(), states.end(), [](char c) { return c >= '0' && c <= '2'; }) ||
          states[d.picked] != '2') {
        bad_checkpoint(checkpoint,
                       "bad candidates' states (one digit 0-2 per candidate, 2 for the pick)");
      }
      tree.state_begin_.push_back(tree.states_.size());
      for (const char c : states) tree.states_.push_back(static_cast<std::uint8_t>(c - '0'));
    }
  }
  if (preemptions > bound) bad_checkpoint(checkpoint, "its path preempts more than its bound");
  return tree;
}

namespace {

constexpr std::string_view kCertificateStart = "bubble: complete: ";

}  // namespace

std::string certificate_line(const TreeShard& shard, std::uint64_t schedules, std::uint32_t bound,
                             std::uint64_t failed) {
  std::string out(kCertificateStart);
  if (shard.total > 1) {
    out += "shard " + std::to_string(shard.index) + "/" + std::to_string(shard.total) + ": ";
  }
  return out + detail::with_thousands_separators(schedules) +
         (schedules == 1 ? " schedule" : " schedules") + " with at most " + std::to_string(bound) +
         (bound == 1 ? " preemption" : " preemptions") + ", " +
         detail::with_thousands_separators(failed) + " failed";
}

namespace {

struct ParsedCertificate {
  TreeShard shard;
  std::uint64_t schedules = 0;
  std::uint32_t bound = 0;
  std::uint64_t failed = 0;
};

// Reads a number written with thousands separators, up to the next space, from `text`.
template <class T>
bool read_grouped(std::string_view& text, T& out) {
  std::string digits;
  std::string_view field = next_field(text, ' ');
  for (const char c : field) {
    if (c != ',') digits += c;
  }
  return parse_number(std::string_view(digits), out);
}

ParsedCertificate parse_certificate(const std::string& line) {
  const auto bad = [&line]() -> ParsedCertificate {
    throw std::invalid_argument("bubble: \"" + line +
                                "\" is not a certificate of an exhaustive "
                                "search (\"bubble: complete: ... schedules with at most K "
                                "preemptions, F failed\")");
  };
  std::string_view rest = line;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r' || rest.back() == ' ')) {
    rest.remove_suffix(1);
  }
  if (rest.substr(0, kCertificateStart.size()) != kCertificateStart) return bad();
  rest.remove_prefix(kCertificateStart.size());
  ParsedCertificate c;
  if (rest.substr(0, 6) == "shard ") {
    rest.remove_prefix(6);
    std::string_view shard = next_field(rest, ' ');
    if (shard.empty() || shard.back() != ':') return bad();
    shard.remove_suffix(1);
    if (!parse_number(next_field(shard, '/'), c.shard.index) ||
        !parse_number(shard, c.shard.total) || c.shard.index >= c.shard.total) {
      return bad();
    }
  }
  if (!read_grouped(rest, c.schedules)) return bad();
  const std::string_view unit = next_field(rest, ' ');
  if (unit != "schedule" && unit != "schedules") return bad();
  if (next_field(rest, ' ') != "with" || next_field(rest, ' ') != "at" ||
      next_field(rest, ' ') != "most" || !parse_number(next_field(rest, ' '), c.bound)) {
    return bad();
  }
  const std::string_view preemptions = next_field(rest, ' ');
  if (preemptions != "preemption," && preemptions != "preemptions,") return bad();
  if (!read_grouped(rest, c.failed) || rest != "failed") return bad();
  return c;
}

}  // namespace

std::string ScheduleTree::certificate(std::uint64_t failed) const {
  return certificate_line(shard_, schedules_, max_preemptions_, failed);
}

std::string merge_certificates(const std::vector<std::string>& certificates) {
  if (certificates.empty()) {
    throw std::invalid_argument("bubble: no certificate to merge");
  }
  std::vector<ParsedCertificate> parsed;
  parsed.reserve(certificates.size());
  for (const std::string& line : certificates) parsed.push_back(parse_certificate(line));
  const ParsedCertificate& first = parsed.front();
  std::vector<bool> seen(first.shard.total, false);
  ParsedCertificate whole;
  whole.bound = first.bound;
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    const ParsedCertificate& c = parsed[i];
    if (c.bound != first.bound || c.shard.total != first.shard.total) {
      throw std::invalid_argument("bubble: \"" + certificates[i] +
                                  "\" is not of the same search as \"" + certificates.front() +
                                  "\" (another bound or another number of shards)");
    }
    if (seen[c.shard.index]) {
      throw std::invalid_argument("bubble: shard " + std::to_string(c.shard.index) + "/" +
                                  std::to_string(c.shard.total) + " is given twice");
    }
    seen[c.shard.index] = true;
    if (c.schedules > std::numeric_limits<std::uint64_t>::max() - whole.schedules ||
        c.failed > std::numeric_limits<std::uint64_t>::max() - whole.failed) {
      throw std::invalid_argument("bubble: the certificates add up to more than " +
                                  std::to_string(std::numeric_limits<std::uint64_t>::max()) +
                                  " schedules or failures, which one certificate cannot state (\"" +
                                  certificates[i] + "\")");
    }
    whole.schedules += c.schedules;
    whole.failed += c.failed;
  }
  for (std::uint32_t i = 0; i < first.shard.total; ++i) {
    if (!seen[i]) {
      throw std::invalid_argument("bubble: the certificate of shard " + std::to_string(i) + "/" +
                                  std::to_string(first.shard.total) +
                                  " is missing: the search is not complete without it");
    }
  }
  return certificate_line(TreeShard{}, whole.schedules, whole.bound, whole.failed);
}

}  // namespace bubble
