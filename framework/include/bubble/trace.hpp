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

// How much of a run a Trace shows (Options::trace_level). Every level records every event
// (Trace::events()); the level decides what text() and chrome_json() show.
enum class TraceLevel : std::uint8_t {
  // Everything: every scheduling point, switch, lock and unlock.
  every_event,
  // Everything except the lock/unlock pairs nobody waited for: a Mutex lock that did not wait,
  // followed by its unlock with no thread waiting, is dropped with its scheduling points (the
  // op, acquire, release and op lines). What remains of the locks is their contention.
  skip_uncontended_locks,
  // Only what blocks and what the user marked: spawns, blocks, wake-ups, timeouts, exits, timer
  // firings, time advances, bubble::wait, failures, contended lock waits and holds, and every
  // trace_note and trace_span; no scheduling points (op) and no switches (run). The level for a
  // run with thousands of lock operations.
  blocking_only,
};

// Trace is the event log of one bubble run, recorded when Options::trace is set.
//
// Events are recorded in the order they happen. Each has the virtual time, the thread (its id in
// the run and its name; thread 0 is the scheduler, which runs timer callbacks), the kind of event,
// the operation and object it concerns, and a source location. The trace also keeps the names the
// program gave its objects (Runtime::new_object_id(name): `Mutex accounts("accounts")`), and
// text() and chrome_json() show an object as `"accounts" #3` (the name, then the id, which stays
// unique), or as `#3` when it has no name. Nothing in a trace depends on
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
    // Locks (Mutex): `thread` took lock `object` through operation `what` ("Mutex::lock",
    // "Mutex::try_lock"). `contended`: it had to wait; `span`: for how long (virtual time, since
    // the lock call).
    acquire,
    // `thread` released lock `object` (`what`: "Mutex::unlock") after holding it for `span`;
    // `contended`: threads were waiting for it.
    release,
    // User markers (trace_note, trace_span): a note with text `what`; the start and the end of
    // a span named `what` (the end has the span's length in `span`).
    note,
    span_begin,
    span_end,
  };

  struct Event {
    Duration time;  // Virtual time since the run's start.
    std::uint64_t thread = 0;
    EventKind kind = EventKind::op;
    std::string_view what;  // Text kept by the trace (note() / intern()).
    std::uint64_t object = 0;
    SourceLocation where;
    Duration span{};         // acquire: time waited; release: time held; span_end: length.
    bool contended = false;  // acquire: had to wait; release: threads were waiting.
  };

  // The events, in order.
  const std::vector<Event>& events() const noexcept { return events_; }
  // The name of thread `id` ("scheduler" for 0); "?" for an unknown id.
  std::string_view thread_name(std::uint64_t id) const noexcept;
  bool empty() const noexcept { return events_.empty(); }

  // The name given to object `id` (Runtime::new_object_id(name)); empty if it has none.
  std::string_view object_name(std::uint64_t id) const noexcept;
  // Whether `e.object` is the id of an object (which may have a name), rather than a thread's
  // (spawn, wake, and the "spawn" and "Thread::join" operations) or a timer's (timer), or none.
  static bool names_an_object(const Event& e) noexcept;

  // One line per event the level shows: "<time> #<thread> <name> <kind> <what> <object>
  // [<duration>] <file>:<line>", the time being the virtual time since the start ("0s", "1.5s");
  // <object> is `"accounts" #3` for a named object, `#3` otherwise (a thread's id also reads
  // `#2`); fields that do not apply are omitted. The duration reads "waited 1s" on a contended
  // acquire, "held 2s" on a release and "lasted 3s" on a span_end. Backslashes and control
  // characters are escaped (`\\`, `\n`, `\x01`), and in a name also quotes (`\"`), so that
  // an event stays on one line.
  std::string text() const;

  // The trace in Chrome's trace-event JSON format (opens in Perfetto and chrome://tracing), with
  // the events the level shows: one track per thread, named after it. Slices ("X" events) on a
  // thread's track: the time it was blocked, named after what it waited on and the object
  // ("Mutex::lock \"accounts\" #3", "sleep"); the time from a contended lock call to the
  // acquisition ("Mutex \"accounts\" #3 wait"); the time a lock was held, from acquisition to
  // unlock ("Mutex \"accounts\" #3 held"); each trace_span, from its start to its end. A
  // trace_note is an instant named by its text; other events are instants named after their kind,
  // operation and object ("op Mutex::lock \"accounts\" #3"). An object is named as in text()
  // (`#3` without a name). Every event's args carry the object's id ("object", 0 for none) and,
  // for a named object, its name ("object_name"). Times are virtual microseconds since the start.
  std::string chrome_json() const;

  // What text() and chrome_json() show (the events are recorded whatever the level).
  TraceLevel level() const noexcept { return level_; }
  void set_level(TraceLevel level) noexcept { level_ = level; }
  // For each event, whether the level shows it (the same length as events()).
  std::vector<bool> shown() const;

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
  // Records that object `id` is called `name` (the bubble calls it from
  // Runtime::new_object_id(name), once per named object, at its construction).
  void add_object(std::uint64_t id, std::string name);
  // Keeps `text` alive as long as the trace and returns a view of it (for Event::what).
  std::string_view note(std::string text);
  // Like note(), but returns the same view for equal texts (used for WaitInfo kinds, which need
  // not outlive the call that reported them).
  std::string_view intern(std::string_view text);

 private:
  std::vector<Event> events_;
  TraceLevel level_ = TraceLevel::every_event;
  std::vector<std::string> thread_names_;              // Indexed by thread id.
  std::map<std::uint64_t, std::string> object_names_;  // Named objects only.
  std::vector<std::unique_ptr<std::string>> notes_;
  std::map<std::string, std::unique_ptr<std::string>, std::less<>> interned_;
};

// --- User markers ------------------------------------------------------------------------------
//
// Notes and spans the program adds to the trace of the bubble run it is in, on the calling
// thread's track (in a timer callback: the scheduler's, #0):
//
//   bubble::trace_note("flushed a batch of 50");
//   {
//     auto span = bubble::trace_span("flush");  // Ends when `span` goes out of scope.
//     ...
//   }
//
// Outside a bubble, or in a bubble run without Options::trace, both cost one test of a
// thread-local flag and do nothing: they do not allocate, never block and never throw, so they
// may stay in production code. They are not scheduling points: adding them does not change a
// run's schedule.

namespace detail {
// True while a bubble that records a trace runs on this OS thread (set by the bubble).
inline constinit thread_local bool tl_tracing = false;
// Records a user marker or a lock event in the running bubble's trace and returns the trace's
// copy of `what`; requires tl_tracing. Defined with the bubble.
std::string_view trace_record(Trace::EventKind kind, std::string_view what, std::uint64_t object,
                              SourceLocation where, Duration span = {}, bool contended = false);
// The running bubble's virtual time since its start; requires tl_tracing.
Duration trace_now() noexcept;
}  // namespace detail

// Adds a note with `text` (copied) to the trace, at the current virtual time.
inline void trace_note(std::string_view text, SourceLocation where = SourceLocation::current()) {
  if (detail::tl_tracing) [[unlikely]]
    detail::trace_record(Trace::EventKind::note, text, 0, where);
}

// TraceSpan marks a span of the calling thread's work in the trace: from its construction to its
// destruction (a slice on the thread's track in chrome_json(); "span_begin" and "span_end ...
// lasted <d>" lines in text()). Made by trace_span(); neither copyable nor movable, so a span
// begins and ends on the same thread. Spans on one thread nest like the scopes that hold them.
class TraceSpan {
 public:
  TraceSpan(std::string_view name, SourceLocation where) {
    if (detail::tl_tracing) [[unlikely]]
      begin(name, where);
  }
  ~TraceSpan() {
    if (recorded_) [[unlikely]]
      end();
  }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  void begin(std::string_view name, SourceLocation where);
  void end() noexcept;
  bool recorded_ = false;
  Duration start_{};
  std::string_view name_;  // Kept by the trace.
  SourceLocation where_;
};

// Starts a span named `name` (copied) that ends when the returned object is destroyed:
// `auto span = bubble::trace_span("flush");`. Discarding the result would end the span at once.
[[nodiscard]] inline TraceSpan trace_span(std::string_view name,
                                          SourceLocation where = SourceLocation::current()) {
  return TraceSpan(name, where);
}

}  // namespace bubble
