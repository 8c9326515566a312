#include "engine/reduction/races.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace bubble::engine {
namespace {

// A vector clock: for each thread id, how many of its steps happen before.
using Clock = std::vector<std::uint32_t>;

void join(Clock& into, const Clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

std::uint32_t entry(const Clock& clock, std::uint32_t thread) {
  return thread < clock.size() ? clock[thread] : 0;
}

void set_entry(Clock& clock, std::uint32_t thread, std::uint32_t value) {
  if (clock.size() <= thread) clock.resize(thread + 1, 0);
  clock[thread] = value;
}

struct StepRecord {
  std::uint32_t thread = 0;
  std::uint32_t epoch = 0;     // Its number among its thread's steps, from 1.
  std::uint32_t decision = 0;  // 1 + the decision that chose its thread, 0 for none.
  // 1 + the decision of the last context switch before it (a step whose thread is not the one of
  // the step before it, chosen by a decision), 0 for none.
  std::uint32_t switch_decision = 0;
};

class Analysis {
 public:
  Analysis(const std::vector<Decision>& decisions, const RunDependencies& log)
      : decisions_(decisions), log_(log), choice_of_(decisions.size(), kNoChoice) {
    for (std::size_t i = 0; i < log.choices.size(); ++i) {
      const std::uint32_t d = log.choices[i].decision;
      if (d < choice_of_.size()) choice_of_[d] = static_cast<std::uint32_t>(i);
    }
  }

  std::vector<Backtrack> run() {
    for (const RunDependencies::Event& e : log_.events) {
      switch (e.kind) {
        case RunDependencies::EventKind::barrier:
          barrier_ = all_;
          break;
        case RunDependencies::EventKind::spawn:
        case RunDependencies::EventKind::wake: {
          // Up to the step of e.thread in progress, which spawns or wakes e.other.
          Clock before = clock_of(e.thread);
          set_entry(before, e.thread, steps_of(e.thread) + 1);
          join(clock_of(e.other), before);
          break;
        }
        case RunDependencies::EventKind::step:
          step(e);
          break;
      }
    }
    return std::move(out_);
  }

 private:
  static constexpr std::uint32_t kNoChoice = ~std::uint32_t{0};

  Clock& clock_of(std::uint32_t thread) {
    if (clocks_.size() <= thread) clocks_.resize(thread + 1);
    return clocks_[thread];
  }
  std::uint32_t& steps_of(std::uint32_t thread) {
    if (epochs_.size() <= thread) {
      epochs_.resize(thread + 1, 0);
      last_step_.resize(thread + 1, kNone);
    }
    return epochs_[thread];
  }

  // p must also run at decision `decision` (1-based; 0: none).
  void request(std::uint32_t decision, std::uint32_t p) {
    if (decision == 0) return;
    const std::uint32_t d = decision - 1;
    if (d >= choice_of_.size() || choice_of_[d] == kNoChoice) return;
    const RunDependencies::ThreadChoice& c = log_.choices[choice_of_[d]];
    const std::uint32_t n = decisions_[d].candidates;
    for (std::uint32_t i = 0; i < n && c.first + i < log_.candidate_ids.size(); ++i) {
      if (log_.candidate_ids[c.first + i] == p) {
        out_.push_back(Backtrack{d, i});
        return;
      }
    }
    out_.push_back(Backtrack{d, Backtrack::kEveryCandidate});
  }

  bool happens_before_thread(std::size_t j, const Clock& clock) const {
    return entry(clock, steps_[j].thread) >= steps_[j].epoch;
  }

  void step(const RunDependencies::Event& e) {
    const std::uint32_t p = e.thread;
    std::uint32_t& epoch = steps_of(p);
    Clock& mine = clock_of(p);
    join(mine, barrier_);
    // The objects the step touches: its point's, and its thread's exit if it is the last.
    std::uint64_t objects[2] = {e.object, RunDependencies::exit_object(p)};
    const std::size_t count = e.object != 0 && e.exits ? 2 : 1;
    // The last dependent step of another thread that does not happen before p's state.
    std::size_t race = kNone;
    if (e.object == 0) {
      for (std::uint32_t q = 0; q < last_step_.size(); ++q) {
        const std::size_t j = last_step_[q];
        if (q == p || j == kNone || happens_before_thread(j, mine)) continue;
        if (race == kNone || j > race) race = j;
      }
    } else {
      for (std::size_t k = 0; k < count; ++k) {
        std::size_t j = last_global_;
        const auto it = objects_.find(objects[k]);
        if (it != objects_.end() && (j == kNone || it->second.last > j)) j = it->second.last;
        if (j == kNone || steps_[j].thread == p || happens_before_thread(j, mine)) continue;
        if (race == kNone || j > race) race = j;
      }
    }
    if (race != kNone) {
      request(steps_[race].decision, p);
      if (steps_[race].switch_decision != steps_[race].decision) {
        request(steps_[race].switch_decision, p);
      }
    }

    // The step's clock: p's, joined with every step it depends on.
    if (e.object == 0) {
      join(mine, all_);
    } else {
      for (std::size_t k = 0; k < count; ++k) {
        const auto it = objects_.find(objects[k]);
        if (it != objects_.end()) join(mine, it->second.clock);
      }
      join(mine, global_clock_);
    }
    ++epoch;
    set_entry(mine, p, epoch);
    const std::size_t index = steps_.size();
    if (e.object == 0) {
      global_clock_ = mine;
      last_global_ = index;
    } else {
      for (std::size_t k = 0; k < count; ++k) {
        ObjectRecord& o = objects_[objects[k]];
        o.clock = mine;
        o.last = index;
      }
    }
    join(all_, mine);
    last_step_[p] = index;
    steps_.push_back(StepRecord{p, epoch, e.decision, last_switch_});
    if (p != previous_thread_ && e.decision != 0) last_switch_ = e.decision;
    previous_thread_ = p;
  }

  static constexpr std::size_t kNone = ~std::size_t{0};

  struct ObjectRecord {
    Clock clock;  // Of its last step: every step on it so far happens before.
    std::size_t last = kNone;
  };

  const std::vector<Decision>& decisions_;
  const RunDependencies& log_;
  std::vector<std::uint32_t> choice_of_;  // Decision index -> index in log_.choices.
  std::vector<Clock> clocks_;             // By thread id.
  std::vector<std::uint32_t> epochs_;     // Steps so far, by thread id.
  std::vector<std::size_t> last_step_;    // By thread id.
  std::unordered_map<std::uint64_t, ObjectRecord> objects_;
  Clock global_clock_;  // Of the last step on object 0.
  std::size_t last_global_ = kNone;
  Clock all_;      // Every step so far.
  Clock barrier_;  // Every step before the last barrier.
  std::vector<StepRecord> steps_;
  std::uint32_t last_switch_ = 0;
  std::uint32_t previous_thread_ = 0;
  std::vector<Backtrack> out_;
};

}  // namespace

std::vector<Backtrack> find_backtracks(const std::vector<Decision>& decisions,
                                       const RunDependencies& log) {
  return Analysis(decisions, log).run();
}

}  // namespace bubble::engine
