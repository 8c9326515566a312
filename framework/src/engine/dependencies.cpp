// Options::dependencies: the log of steps, objects and thread decisions that partial-order
// reduction reads (see RunDependencies). Only runs with the log come here: every scheduling
// point then takes the slow path, which calls log_point.

#include <cstddef>
#include <cstdint>

#include "engine/bubble.hpp"

namespace bubble::engine {

void Bubble::log_point(BThread* t, std::uint64_t object) {
  if (failed_) return;  // The teardown's steps are not the program's.
  std::vector<RunDependencies::Event>& events = deps_->events;
  RunDependencies::Event& step = events.emplace_back();
  step.thread = static_cast<std::uint32_t>(t->id);
  step.decision = t->chosen_by;
  step.object = t->step_object;
  step.reads = t->step_reads;
  t->step_object = next_point_object_ != 0 ? next_point_object_ : object;
  t->step_reads = next_point_reads_;
  next_point_object_ = 0;
  next_point_reads_ = false;
  t->chosen_by = 0;
  // Room for the wake-ups of the next step (at most one per thread), which log_edge records
  // without allocating.
  if (events.capacity() - events.size() < live_ + 2)
    events.reserve(2 * (events.size() + live_ + 2));
}

void Bubble::log_exit(BThread* t) {
  log_point(t, 0);
  if (!failed_) deps_->events.back().exits = true;
}

void Bubble::log_choice(const BThread* first, const BThread* last, std::size_t idx) {
  const Candidates candidates(first, queue_, last);
  const auto decision = static_cast<std::uint32_t>(options_.decisions->size() - 1);
  deps_->choices.push_back(RunDependencies::ThreadChoice{
      decision, static_cast<std::uint32_t>(deps_->candidate_ids.size())});
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    deps_->candidate_ids.push_back(static_cast<std::uint32_t>(candidates[i]->id));
  }
  // idx indexes the candidates (the run queue itself when there is no `first`).
  const_cast<BThread*>(candidates[idx])->chosen_by = decision + 1;
}

void Bubble::log_edge(RunDependencies::EventKind kind, const BThread* to) noexcept {
  if (failed_ || current_ == nullptr) return;  // A timer callback: a barrier or a fired timer.
  std::vector<RunDependencies::Event>& events = deps_->events;
  if (events.size() == events.capacity()) return;  // Only loses an ordering: more is explored.
  events.push_back(RunDependencies::Event{kind, static_cast<std::uint32_t>(current_->id),
                                          static_cast<std::uint32_t>(to->id), 0, 0});
}

void Bubble::log_barrier() {
  if (failed_) return;
  deps_->events.push_back(RunDependencies::Event{RunDependencies::EventKind::barrier, 0, 0, 0, 0});
}

void Bubble::log_last_step_touches_all() noexcept {
  if (failed_) return;
  std::vector<RunDependencies::Event>& events = deps_->events;
  for (std::size_t i = events.size(); i-- > 0;) {
    if (events[i].kind == RunDependencies::EventKind::step) {
      events[i].object = 0;
      events[i].reads = false;
      return;
    }
  }
}

}  // namespace bubble::engine
