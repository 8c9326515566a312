#pragma once

// What a run records about which thread touched which object: what partial-order reduction
// (ScheduleTree with Reduction::dpor) needs to tell the schedules that only reorder independent
// operations from those that could end differently.

#include <cstdint>
#include <vector>

namespace bubble {

// RunDependencies is the log Options::dependencies fills (together with Options::decisions, which
// it refers to). A run is a sequence of steps: a step is what one thread does from one of its
// scheduling points (an operation of a bubble primitive or of a hooked atomic, a park, a yield) to
// the next, or to its exit. Everything a step does to memory that other threads share goes
// through the operation it starts with, on one object; a thread's first step, from its start to
// its first point, touches only what it alone can see yet, as does a step that starts with a
// wait nothing but its deadline ends (WaitInfo::private_wait: a plain sleep). Two steps are
// dependent when they are of the same thread, or on the same object, or either is on object 0 (an
// operation bubble does not know the object of: a yield, a sleep under a context, a select over
// several channels), which is dependent with everything, except that two steps that only read an
// object (atomic loads) are independent. A thread's last step also touches the thread's exit, as
// the joins of it do.
//
// Code that shares memory without any operation bubble sees (plain variables read and written by
// several threads without a lock: a data race) is invisible here; partial-order reduction does
// not enumerate the orders of such accesses, and bubble::instrument's race detector is the tool
// that reports them.
struct RunDependencies {
  enum class EventKind : std::uint8_t {
    // `thread` ran a step on `object`; `decision` is 1 + the index (in Options::decisions) of the
    // decision that chose `thread` to run it, or 0 when nothing else could run.
    step,
    // `thread` spawned thread `other`: what `thread` did up to here happens before what `other`
    // does.
    spawn,
    // `thread` woke thread `other`, which was blocked: what `thread` did up to here happens
    // before what `other` does next.
    wake,
    // Every thread was blocked and time moved on (or timers fired): nothing before this event can
    // be reordered with anything after it.
    barrier,
  };
  struct Event {
    EventKind kind = EventKind::step;
    std::uint32_t thread = 0;
    std::uint32_t other = 0;  // spawn: the child.
    std::uint32_t decision = 0;
    std::uint64_t object = 0;
    // step: the thread's last, which ends with its exit: it also touches the thread's exit
    // (exit_object(thread)), as does every join of the thread.
    bool exits = false;
    // step: it only reads its object (an atomic load). Steps that only read the same object are
    // independent of one another.
    bool reads = false;
  };
  // The object a thread's exit and the joins of it touch.
  static constexpr std::uint64_t exit_object(std::uint32_t thread) noexcept {
    return (std::uint64_t{1} << 62) | thread;
  }
  // A decision among threads (not among timers or select cases): the candidates' thread ids, in
  // the decision's candidate order, are candidate_ids[first, first + candidates).
  struct ThreadChoice {
    std::uint32_t decision = 0;  // Index in Options::decisions.
    std::uint32_t first = 0;
  };

  std::vector<Event> events;
  std::vector<ThreadChoice> choices;
  std::vector<std::uint32_t> candidate_ids;

  // Empties the log for the next run (keeping its memory).
  void clear() noexcept {
    events.clear();
    choices.clear();
    candidate_ids.clear();
  }
};

}  // namespace bubble
