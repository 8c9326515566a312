#include <bubble/shrink.hpp>

#include <bubble/detail/schedule_shrink.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string_view>
#include <typeinfo>
#include <utility>

#include <bubble/detail/demangle.hpp>

namespace bubble {

namespace detail {

Picks trimmed(Picks picks) {
  while (!picks.empty() && picks.back() == 0) picks.pop_back();
  return picks;
}

std::vector<Picks> preemption_candidates(const Picks& picks) {
  std::vector<Picks> out;
  std::size_t nonzero = 0;
  for (std::uint32_t p : picks) nonzero += p != 0 ? 1 : 0;
  for (std::size_t i = 0; i < picks.size(); ++i) {
    if (picks[i] == 0) continue;
    if (nonzero > 1) {
      Picks only(picks.size(), 0);
      only[i] = picks[i];
      out.push_back(trimmed(std::move(only)));
    }
    for (std::size_t shift : {1, 2}) {
      if (i + 1 == picks.size()) break;  // Nothing after pick i to move.
      Picks later(picks.begin(), picks.begin() + static_cast<std::ptrdiff_t>(i));
      later.insert(later.end(), shift + 1, 0);
      later.insert(later.end(), picks.begin() + static_cast<std::ptrdiff_t>(i) + 1, picks.end());
      out.push_back(trimmed(std::move(later)));
    }
  }
  return out;
}

}  // namespace detail

namespace {

using detail::Picks;
using detail::trimmed;
using Clock = std::chrono::steady_clock;

std::size_t nonzero(const Picks& p) noexcept {
  return static_cast<std::size_t>(std::count_if(p.begin(), p.end(), [](auto x) { return x != 0; }));
}

// The order of shrinking: fewer preemptions, then fewer picks, then lexicographically smaller.
bool smaller(const Picks& a, const Picks& b) noexcept {
  const std::size_t na = nonzero(a);
  const std::size_t nb = nonzero(b);
  if (na != nb) return na < nb;
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

std::string exception_kind(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return "exception " + detail::demangle(typeid(x).name());
  } catch (...) {
    return "unknown exception";
  }
}

// One shrink search: the best schedule so far, the limits, and the schedules already run.
class Search {
 public:
  Search(const FailureCheck& fails, const ShrinkOptions& limits)
      : fails_(fails), limits_(limits), deadline_(Clock::now() + limits.time_budget) {}

  // Establishes the failure of `failing`; false if it does not fail.
  bool start(const Picks& failing) {
    ++runs_;
    tried_.insert(failing);
    const std::optional<Schedule> r = fails_(Schedule{failing, failing.size()});
    if (!r) return false;
    learn(*r);
    best_ = trimmed(r->picks);
    return true;
  }

  // Moves to the first candidate of the best schedule that still fails and is smaller, until
  // none is (or a limit is reached).
  void greedy() {
    while (!exhausted() && improve_once()) {
    }
  }

  // Tries every schedule with q nonzero picks, q = 1 ... bound, while the best has more than q;
  // a failing one is shrunk greedily.
  void bounded(std::size_t bound) {
    for (std::size_t q = 1; q <= bound && !exhausted(); ++q) {
      if (nonzero(best_) <= q) return;
      std::vector<std::size_t> at(q);
      if (place(at, 0, 0)) {
        greedy();
        q = 0;  // Start again from 1 preemption: the best has changed.
      }
    }
  }

  ShrinkResult result() const {
    ShrinkResult r;
    r.schedule.picks = best_;
    r.schedule.decisions = best_.size();
    r.preemptions = nonzero(best_);
    r.runs = runs_;
    r.budget_exhausted = exhausted_;
    return r;
  }

 private:
  // Learns the shape of a failing run: how many decisions it took, the largest pick.
  void learn(const Schedule& s) {
    decisions_ = std::max<std::uint64_t>(decisions_, s.decisions);
    decisions_ = std::max<std::uint64_t>(decisions_, s.picks.size());
    for (std::uint32_t p : s.picks) max_pick_ = std::max(max_pick_, p);
  }

  bool exhausted() {
    if (!exhausted_ && (runs_ >= limits_.max_runs || Clock::now() >= deadline_)) exhausted_ = true;
    return exhausted_;
  }

  // Runs `candidate` (once per distinct schedule); true if it failed the same way and what it
  // recorded is smaller than the best, which it then becomes.
  bool accept(Picks candidate) {
    candidate = trimmed(std::move(candidate));
    if (exhausted() || !smaller(candidate, best_) || !tried_.insert(candidate).second) return false;
    ++runs_;
    const std::optional<Schedule> r = fails_(Schedule{candidate, candidate.size()});
    if (!r) return false;
    learn(*r);
    Picks recorded = trimmed(r->picks);
    if (!smaller(recorded, best_)) return false;
    best_ = std::move(recorded);
    return true;
  }

  bool improve_once() {
    const Picks best = best_;
    for (Picks& c : detail::preemption_candidates(best)) {
      if (accept(std::move(c))) return true;
    }
    // Without a contiguous run of picks, the runs halving in length: trailing decisions go back
    // to fifo, later picks move to earlier decisions.
    for (std::size_t len = best.size(); len > 0; len /= 2) {
      for (std::size_t from = 0; from + len <= best.size(); from += len) {
        Picks c(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(from));
        c.insert(c.end(), best.begin() + static_cast<std::ptrdiff_t>(from + len), best.end());
        if (accept(std::move(c))) return true;
      }
    }
    for (std::size_t i = 0; i < best.size(); ++i) {
      for (std::uint32_t v = 0; v < best[i]; ++v) {
        Picks c = best;
        c[i] = v;
        if (accept(std::move(c))) return true;
      }
    }
    return false;
  }

  // Chooses the decisions of the nonzero picks at[k...] (each after the previous one), then
  // their values; true once a candidate is accepted.
  bool place(std::vector<std::size_t>& at, std::size_t k, std::size_t from) {
    if (k == at.size()) {
      Picks c(at.back() + 1, 0);
      return assign(c, at, 0);
    }
    for (std::size_t d = from; d < decisions_ && !exhausted(); ++d) {
      at[k] = d;
      if (place(at, k + 1, d + 1)) return true;
    }
    return false;
  }

  bool assign(Picks& c, const std::vector<std::size_t>& at, std::size_t k) {
    if (k == at.size()) return accept(c);
    for (std::uint32_t v = 1; v <= std::max<std::uint32_t>(1, max_pick_) && !exhausted(); ++v) {
      c[at[k]] = v;
      if (assign(c, at, k + 1)) return true;
    }
    return false;
  }

  const FailureCheck& fails_;
  const ShrinkOptions& limits_;
  Clock::time_point deadline_;
  std::uint64_t runs_ = 0;
  bool exhausted_ = false;
  Picks best_;
  std::set<Picks> tried_;
  std::uint64_t decisions_ = 0;
  std::uint32_t max_pick_ = 0;
};

}  // namespace

std::size_t preemptions(const Schedule& s) noexcept {
  return nonzero(s.picks);
}

std::string failure_kind(const std::exception_ptr& failure) {
  if (!failure) return {};
  try {
    std::rethrow_exception(failure);
  } catch (const DeadlockError&) {
    return "deadlock";
  } catch (const RunFailure& e) {
    const auto* nested = dynamic_cast<const std::nested_exception*>(&e);
    if (nested != nullptr && nested->nested_ptr() != nullptr) {
      return exception_kind(nested->nested_ptr());
    }
    std::string_view text = e.what();
    constexpr std::string_view kPrefix = "bubble: ";
    if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
    return std::string(text.substr(0, text.find_first_of(":\n")));
  } catch (...) {
    return exception_kind(std::current_exception());
  }
}

std::string ShrinkResult::describe() const {
  return schedule.to_strategy().to_string() + " (" + std::to_string(preemptions) +
         (preemptions == 1 ? " preemption)" : " preemptions)");
}

ShrinkResult shrink_schedule(const Schedule& failing, const FailureCheck& fails,
                             const ShrinkOptions& limits) {
  if (!fails) throw std::invalid_argument("bubble::shrink_schedule: `fails` is empty");
  Search search(fails, limits);
  if (!search.start(failing.picks)) {
    throw std::invalid_argument("bubble::shrink_schedule: the schedule to shrink, choices:" +
                                failing.to_string() + ", does not fail");
  }
  search.greedy();
  search.bounded(limits.preemption_bound);
  return search.result();
}

ShrinkResult shrink_failure(const Options& failing_run, const std::function<void(Runtime&)>& body,
                            const ShrinkOptions& limits) {
  if (!body) throw std::invalid_argument("bubble::shrink_failure: `body` is empty");
  Options options = failing_run;
  options.rethrow_original = false;  // The search needs every failure as a RunFailure.
  const bool user_trace = options.trace;
  options.trace = false;  // Only the shrunk run's trace is wanted, if any.

  // Runs `options` and returns the failure (kind, recorded schedule, message), if any.
  struct Outcome {
    std::string kind;
    Schedule schedule;
    std::string message;
  };
  auto attempt = [&](const Options& o) -> std::optional<Outcome> {
    try {
      (void)run(o, body);
      return std::nullopt;
    } catch (const RunFailure& e) {
      return Outcome{failure_kind(std::current_exception()), e.schedule(), e.what()};
    } catch (...) {
      return std::nullopt;  // Carries no schedule: cannot be replayed.
    }
  };

  const std::optional<Outcome> first = attempt(options);
  if (!first) {
    throw std::invalid_argument(
        "bubble::shrink_failure: the run to shrink (strategy " +
        (options.replay ? "choices:" + options.replay->to_string() : options.strategy.to_string()) +
        ") does not fail with a RunFailure");
  }
  options.replay.reset();
  FailureCheck same_failure = [&](const Schedule& candidate) -> std::optional<Schedule> {
    Options o = options;
    o.replay = candidate;
    std::optional<Outcome> r = attempt(o);
    if (!r || r->kind != first->kind) return std::nullopt;
    return std::move(r->schedule);
  };
  // The first run's recorded schedule is the one to shrink; its check is the search's first run.
  ShrinkResult result = shrink_schedule(first->schedule, same_failure, limits);
  result.runs += 1;
  result.kind = first->kind;
  Options last = options;
  last.trace = user_trace;
  last.replay = result.schedule;
  const std::optional<Outcome> shrunk = attempt(last);
  result.runs += 1;
  if (shrunk) result.message = shrunk->message;
  return result;
}

}  // namespace bubble
