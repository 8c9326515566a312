#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

// Trace is the event log of one bubble run, recorded when Options::trace is set.
//
// Events are recorded in the order they happen. Each has the virtual time, the thread (its id in
// the run and its name; thread 0 is the scheduler, which runs timer callbacks), the kind of event,
// the operation and object it concerns, and a source location. Nothing in a trace depends on
// pointer values, real time or hash order: the same program, inputs and strategy give a
// byte-identical text(), in one process or across processes.
class Trace {
 public:
  enum class EventKind : std::uint8_t {
    spawn,    // `thread` started thread `object` (its new id).
    op,       // `thread` reached a scheduling point: operation `what` on object `object`.
    block,    // `thread` blocked on `what`, object `object`.
    wake,     // `thread` was made runnable by an unpark (by the thread named in `object`).
    timeout,  // `thread`'s park deadline passed.
    run,      // The scheduler switched to `thread`.
    exit,     // `thread` returned from its body (or was unwound).
    timer,    // A timer callback ran (timer id in `object`).
    advance,  // Virtual time jumped forward to `time`.
    wait,     // bubble::wait() returned in `thread`.
    failure,  // The run failed; `what` says why.
  };

  struct Event {
    Duration time;  // Virtual time since the run's start.
    std::uint64_t thread = 0;
    EventKind kind = EventKind::op;
    std::string_view what;  // Text kept by the trace (note() / intern()).
    std::uint64_t object = 0;
    SourceLocation where;
  };

  // The events, in order.
  const std::vector<Event>& events() const noexcept { return events_; }
  // The name of thread `id` ("scheduler" for 0); "?" for an unknown id.
  std::string_view thread_name(std::uint64_t id) const noexcept;
  bool empty() const noexcept { return events_.empty(); }

  // One line per event: "<time> #<thread> <name> <kind> <what> #<object> <file>:<line>", the time
  // being the virtual time since the start ("0s", "1.5s"); fields that do not apply are omitted.
  std::string text() const;

  // The trace in Chrome's trace-event JSON format (opens in Perfetto and chrome://tracing): one
  // track per thread, named after it; the time a thread spends blocked is a slice named after
  // what it waited on; other events are instants. Times are virtual microseconds since the start.
  std::string chrome_json() const;

  // --- Recording (used by the bubble) --------------------------------------------------------
  // Appends `e`; never allocates while reserve_spare() left room.
  void add(const Event& e) { events_.push_back(e); }
  // Makes room for `n` more events, so that the next `n` add() calls do not allocate (the bubble
  // records wake-ups from Runtime::unpark, which is noexcept).
  void reserve_spare(std::size_t n) {
    if (events_.capacity() - events_.size() < n) {
      events_.reserve(std::max(2 * events_.capacity(), events_.size() + n));
    }
  }
  void add_thread(std::uint64_t id, std::string name);
  // Keeps `text` alive as long as the trace and returns a view of it (for Event::what).
  std::string_view note(std::string text);
  // Like note(), but returns the same view for equal texts (used for WaitInfo kinds, which need
  // not outlive the call that reported them).
  std::string_view intern(std::string_view text);

 private:
  std::vector<Event> events_;
  std::vector<std::string> thread_names_;  // Indexed by thread id.
  std::vector<std::unique_ptr<std::string>> notes_;
  std::map<std::string, std::unique_ptr<std::string>, std::less<>> interned_;
};

}  // namespace bubble
