#include "engine/reduction/races.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bubble::engine {
namespace {

struct StepRecord {
  std::uint32_t thread = 0;
  std::uint32_t epoch = 0;     // Its number among its thread's steps, from 1.
  std::uint32_t decision = 0;  // 1 + the decision that chose its thread, 0 for none.
  // 1 + the decision of the last context switch before it (a step whose thread is not the one of
  // the step before it, chosen by a decision), 0 for none.
  std::uint32_t switch_decision = 0;
};

// The arrays of an analysis, kept from one analysis to the next on the same thread (one per run of
// a search), so that an analysis allocates nothing once they have grown to a run's size. The
// vector clocks of a run all have one entry per thread id of the run (how many of that thread's
// steps happen before), and live side by side in `clocks`.
struct Workspace {
  std::vector<std::uint32_t> choice_of;
  std::vector<std::uint64_t> object_ids;
  std::vector<std::uint32_t> clocks;
  std::vector<std::uint32_t> epochs;
  std::vector<std::size_t> last_step;
  std::vector<std::size_t> object_last;
  std::vector<std::size_t> object_reads;
  std::vector<StepRecord> steps;
};

class Analysis {
 public:
  Analysis(const std::vector<Decision>& decisions, const RunDependencies& log, Workspace& w)
      : decisions_(decisions),
        log_(log),
        choice_of_(w.choice_of),
        object_ids_(w.object_ids),
        clocks_(w.clocks),
        epochs_(w.epochs),
        last_step_(w.last_step),
        object_last_(w.object_last),
        object_reads_(w.object_reads),
        steps_(w.steps) {
    choice_of_.assign(decisions.size(), kNoChoice);
    for (std::size_t i = 0; i < log.choices.size(); ++i) {
      const std::uint32_t d = log.choices[i].decision;
      if (d < choice_of_.size()) choice_of_[d] = static_cast<std::uint32_t>(i);
    }
    // The thread ids and the objects (other than object 0) the steps touch.
    std::uint32_t threads = 0;
    std::size_t steps = 0;
    object_ids_.clear();
    for (const RunDependencies::Event& e : log.events) {
      threads = std::max({threads, e.thread + 1, e.other + 1});
      if (e.kind != RunDependencies::EventKind::step) continue;
      ++steps;
      if (e.object == 0) continue;
      add_object(e.object);
      if (e.exits) add_object(RunDependencies::exit_object(e.thread));
    }
    width_ = threads;
    // Per thread: its clock; per object: the clock of its last writing step, and the join of
    // the reading steps since; then the clock of the last step on object 0, of every step so far,
    // of every step before the last barrier.
    clocks_.assign((threads + 2 * object_ids_.size() + 3) * width_, 0);
    epochs_.assign(threads, 0);
    last_step_.assign(threads, kNone);
    object_last_.assign(object_ids_.size(), kNone);
    object_reads_.assign(object_ids_.size() * width_, kNone);
    steps_.clear();
    steps_.reserve(steps);
  }

  std::vector<Backtrack> run() {
    for (const RunDependencies::Event& e : log_.events) {
      switch (e.kind) {
        case RunDependencies::EventKind::barrier:
          copy(barrier_clock(), all_clock());
          break;
        case RunDependencies::EventKind::spawn:
        case RunDependencies::EventKind::wake: {
          // Up to the step of e.thread in progress, which spawns or wakes e.other.
          std::uint32_t* const to = thread_clock(e.other);
          const std::uint32_t* const from = thread_clock(e.thread);
          const std::uint32_t now = epochs_[e.thread] + 1;
          for (std::uint32_t i = 0; i < width_; ++i) {
            to[i] = std::max(to[i], i == e.thread ? now : from[i]);
          }
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
  static constexpr std::size_t kNone = ~std::size_t{0};

  std::uint32_t* thread_clock(std::uint32_t thread) {
    return &clocks_[std::size_t{thread} * width_];
  }
  std::uint32_t* object_clock(std::size_t object) { return &clocks_[(width_ + object) * width_]; }
  std::uint32_t* read_clock(std::size_t object) {
    return object_clock(object_ids_.size() + object);
  }
  std::uint32_t* global_clock() { return object_clock(2 * object_ids_.size()); }
  std::uint32_t* all_clock() { return object_clock(2 * object_ids_.size() + 1); }
  std::uint32_t* barrier_clock() { return object_clock(2 * object_ids_.size() + 2); }
  // Each thread's last step that only read `object` since its last writing step (kNone: none).
  std::size_t* reads_of(std::size_t object) { return &object_reads_[object * width_]; }

  void join(std::uint32_t* into, const std::uint32_t* from) const {
    for (std::uint32_t i = 0; i < width_; ++i) into[i] = std::max(into[i], from[i]);
  }
  void copy(std::uint32_t* into, const std::uint32_t* from) const {
    std::copy(from, from + width_, into);
  }
  // Adds an object to the sorted object_ids_ unless it is there (a run touches few objects, many
  // times each).
  void add_object(std::uint64_t object) {
    const auto it = std::lower_bound(object_ids_.begin(), object_ids_.end(), object);
    if (it == object_ids_.end() || *it != object) object_ids_.insert(it, object);
  }
  // The index of a (non-zero) object among object_ids_.
  std::size_t object_index(std::uint64_t object) const {
    return static_cast<std::size_t>(
        std::lower_bound(object_ids_.begin(), object_ids_.end(), object) - object_ids_.begin());
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

  bool happens_before_thread(std::size_t j, const std::uint32_t* clock) const {
    return clock[steps_[j].thread] >= steps_[j].epoch;
  }

  void step(const RunDependencies::Event& e) {
    const std::uint32_t p = e.thread;
    std::uint32_t& epoch = epochs_[p];
    std::uint32_t* const mine = thread_clock(p);
    join(mine, barrier_clock());
    // The objects the step touches: its point's, and its thread's exit if it is the last. Only
    // the point's object may be merely read.
    std::size_t objects[2] = {0, 0};
    std::size_t count = 0;
    if (e.object != 0) {
      objects[count++] = object_index(e.object);
      if (e.exits) objects[count++] = object_index(RunDependencies::exit_object(p));
    }
    // The last dependent step of another thread that does not happen before p's state.
    std::size_t race = kNone;
    const auto consider = [&](std::size_t j) {
      if (j == kNone || steps_[j].thread == p || happens_before_thread(j, mine)) return;
      if (race == kNone || j > race) race = j;
    };
    const auto reads_only = [&](std::size_t k) { return k == 0 && e.reads; };
    if (e.object == 0) {
      for (std::uint32_t q = 0; q < width_; ++q) {
        if (q != p) consider(last_step_[q]);
      }
    } else {
      consider(last_global_);
      for (std::size_t k = 0; k < count; ++k) {
        consider(object_last_[objects[k]]);
        // A write also depends on the reads since the last write, which are not ordered among
        // themselves: each thread's last one.
        if (reads_only(k)) continue;
        const std::size_t* const reads = reads_of(objects[k]);
        for (std::uint32_t q = 0; q < width_; ++q) consider(reads[q]);
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
      join(mine, all_clock());
    } else {
      for (std::size_t k = 0; k < count; ++k) {
        join(mine, object_clock(objects[k]));
        if (!reads_only(k)) join(mine, read_clock(objects[k]));
      }
      join(mine, global_clock());
    }
    ++epoch;
    mine[p] = epoch;
    const std::size_t index = steps_.size();
    if (e.object == 0) {
      copy(global_clock(), mine);
      last_global_ = index;
    } else {
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t o = objects[k];
        if (reads_only(k)) {
          join(read_clock(o), mine);
          reads_of(o)[p] = index;
        } else {
          copy(object_clock(o), mine);  // It joined every earlier step on the object.
          object_last_[o] = index;
          std::fill(read_clock(o), read_clock(o) + width_, 0);
          std::fill(reads_of(o), reads_of(o) + width_, kNone);
        }
      }
    }
    join(all_clock(), mine);
    last_step_[p] = index;
    steps_.push_back(StepRecord{p, epoch, e.decision, last_switch_});
    if (p != previous_thread_ && e.decision != 0) last_switch_ = e.decision;
    previous_thread_ = p;
  }

  const std::vector<Decision>& decisions_;
  const RunDependencies& log_;
  std::vector<std::uint32_t>& choice_of_;   // Decision index -> index in log_.choices.
  std::uint32_t width_ = 0;                 // Entries of a clock: the run's thread ids.
  std::vector<std::uint64_t>& object_ids_;  // Sorted.
  std::vector<std::uint32_t>& clocks_;      // See the constructor.
  std::vector<std::uint32_t>& epochs_;      // Steps so far, by thread id.
  std::vector<std::size_t>& last_step_;     // By thread id.
  std::vector<std::size_t>& object_last_;   // The last writing step on each object, by index.
  std::vector<std::size_t>& object_reads_;  // reads_of() of every object.
  std::size_t last_global_ = kNone;         // The last step on object 0.
  std::vector<StepRecord>& steps_;
  std::uint32_t last_switch_ = 0;
  std::uint32_t previous_thread_ = 0;
  std::vector<Backtrack> out_;
};

}  // namespace

std::vector<Backtrack> find_backtracks(const std::vector<Decision>& decisions,
                                       const RunDependencies& log) {
  thread_local Workspace workspace;
  return Analysis(decisions, log, workspace).run();
}

}  // namespace bubble::engine
