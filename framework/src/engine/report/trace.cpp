#include <bubble/trace.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bubble {
namespace {

const char* kind_name(Trace::EventKind k) {
  switch (k) {
    case Trace::EventKind::spawn:
      return "spawn";
    case Trace::EventKind::op:
      return "op";
    case Trace::EventKind::block:
      return "block";
    case Trace::EventKind::wake:
      return "wake";
    case Trace::EventKind::timeout:
      return "timeout";
    case Trace::EventKind::run:
      return "run";
    case Trace::EventKind::exit:
      return "exit";
    case Trace::EventKind::timer:
      return "timer";
    case Trace::EventKind::advance:
      return "advance";
    case Trace::EventKind::wait:
      return "wait";
    case Trace::EventKind::failure:
      return "failure";
    case Trace::EventKind::acquire:
      return "acquire";
    case Trace::EventKind::release:
      return "release";
    case Trace::EventKind::note:
      return "note";
    case Trace::EventKind::span_begin:
      return "span_begin";
    case Trace::EventKind::span_end:
      return "span_end";
  }
  return "?";
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Virtual nanoseconds as JSON microseconds with exact decimals ("1000000.5").
void append_micros(std::string& out, Duration d) {
  const long long ns = d.count();
  char buf[48];
  if (ns % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld", ns / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%lld.%03lld", ns / 1000,
                  ns % 1000 < 0 ? -(ns % 1000) : ns % 1000);
  }
  out += buf;
}

// Appends `s` with control characters and backslashes escaped, so that every event stays on one
// line of the text form.
void append_escaped(std::string& out, std::string_view s) {
  for (const char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
}

void append_location(std::string& out, const SourceLocation& where) {
  if (where.line() == 0) return;
  out += where.file_name();
  out += ':';
  out += std::to_string(where.line());
}

// The duration an event carries, as text() shows it ("waited 1s"); nullptr if it has none.
const char* duration_label(const Trace::Event& e) {
  switch (e.kind) {
    case Trace::EventKind::acquire:
      return e.contended ? "waited" : nullptr;
    case Trace::EventKind::release:
      return "held";
    case Trace::EventKind::span_end:
      return "lasted";
    default:
      return nullptr;
  }
}

// Appends object `id` as traces show it: `"accounts" #3` when it has a name (quotes and
// backslashes in the name escaped, like control characters), `#3` otherwise.
void append_object(std::string& out, std::uint64_t id, std::string_view name) {
  if (!name.empty()) {
    out += '"';
    for (const char c : name) {
      if (c == '"') {
        out += "\\\"";
      } else {
        append_escaped(out, std::string_view(&c, 1));
      }
    }
    out += "\" ";
  }
  out += '#';
  out += std::to_string(id);
}

// The class a lock operation belongs to ("Mutex" for "Mutex::lock"), naming its slices.
std::string_view lock_class(std::string_view operation) {
  const std::size_t colons = operation.find("::");
  return colons == std::string_view::npos ? operation : operation.substr(0, colons);
}

}  // namespace

std::string_view Trace::thread_name(std::uint64_t id) const noexcept {
  if (id == 0) return "scheduler";
  if (id < thread_names_.size() && !thread_names_[id].empty()) return thread_names_[id];
  return "?";
}

void Trace::add_thread(std::uint64_t id, std::string name) {
  if (thread_names_.size() <= id) thread_names_.resize(id + 1);
  thread_names_[id] = std::move(name);
}

void Trace::add_object(std::uint64_t id, std::string name) {
  object_names_.insert_or_assign(id, std::move(name));
}

std::string_view Trace::object_name(std::uint64_t id) const noexcept {
  const auto it = object_names_.find(id);
  return it != object_names_.end() ? std::string_view(it->second) : std::string_view();
}

bool Trace::names_an_object(const Event& e) noexcept {
  if (e.object == 0) return false;
  switch (e.kind) {
    case EventKind::op:
    case EventKind::block:
    case EventKind::timeout:
      // A spawn's and a join's id is the thread's, not an object's.
      return e.what != "spawn" && e.what != "Thread::join";
    case EventKind::acquire:
    case EventKind::release:
      return true;
    default:
      return false;
  }
}

std::string_view Trace::note(std::string text) {
  notes_.push_back(std::make_unique<std::string>(std::move(text)));
  return *notes_.back();
}

std::string_view Trace::intern(std::string_view text) {
  if (text.empty()) return {};
  auto it = interned_.find(text);
  if (it == interned_.end()) {
    it = interned_.emplace(std::string(text), std::make_unique<std::string>(text)).first;
  }
  return *it->second;
}

std::vector<bool> Trace::shown() const {
  std::vector<bool> keep(events_.size(), true);
  if (level_ == TraceLevel::every_event) return keep;
  const bool blocking_only = level_ == TraceLevel::blocking_only;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  struct ThreadState {
    std::size_t last_op = kNone;  // The thread's latest scheduling point.
    bool drop_unlock_op = false;  // Its next op, if the unlock's second point, is dropped.
    std::uint64_t unlocked = 0;   // The lock whose unlock that was.
  };
  struct Hold {
    std::size_t acquire;
    std::size_t lock_op;  // The lock call's scheduling point, or kNone.
    bool contended;
  };
  std::vector<ThreadState> threads;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Hold> holds;  // (thread, lock) -> its hold.
  auto is_op_on = [&](std::size_t i, std::uint64_t object) {
    return i != kNone && events_[i].object == object;
  };
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    if (e.thread >= threads.size()) threads.resize(e.thread + 1);
    ThreadState& t = threads[e.thread];
    switch (e.kind) {
      case EventKind::op:
        if (blocking_only) keep[i] = false;
        if (t.drop_unlock_op && e.object == t.unlocked && e.what == "Mutex::unlock") {
          keep[i] = false;
        }
        t.drop_unlock_op = false;
        t.last_op = i;
        break;
      case EventKind::run:
        if (blocking_only) keep[i] = false;
        break;
      case EventKind::acquire:
        holds[{e.thread, e.object}] =
            Hold{i, is_op_on(t.last_op, e.object) ? t.last_op : kNone, e.contended};
        break;
      case EventKind::release: {
        const auto it = holds.find({e.thread, e.object});
        if (it == holds.end()) break;
        const Hold hold = it->second;
        holds.erase(it);
        if (hold.contended || e.contended) break;
        keep[hold.acquire] = false;
        if (hold.lock_op != kNone) keep[hold.lock_op] = false;
        if (is_op_on(t.last_op, e.object) && t.last_op > hold.acquire) keep[t.last_op] = false;
        keep[i] = false;
        t.drop_unlock_op = true;
        t.unlocked = e.object;
        break;
      }
      default:
        break;
    }
  }
  return keep;
}

std::string Trace::text() const {
  std::string out;
  out.reserve(events_.size() * 64);
  const std::vector<bool> keep = shown();
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (!keep[i]) continue;
    const Event& e = events_[i];
    out += format_duration(e.time);
    out += " #";
    out += std::to_string(e.thread);
    out += ' ';
    append_escaped(out, thread_name(e.thread));
    out += ' ';
    out += kind_name(e.kind);
    if (!e.what.empty()) {
      out += ' ';
      append_escaped(out, e.what);
    }
    if (names_an_object(e)) {
      out += ' ';
      append_object(out, e.object, object_name(e.object));
    } else if (e.object != 0) {
      out += " #";
      out += std::to_string(e.object);
    }
    if (const char* label = duration_label(e)) {
      out += ' ';
      out += label;
      out += ' ';
      out += format_duration(e.span);
    }
    if (e.where.line() != 0) {
      out += ' ';
      append_location(out, e.where);
    }
    out += '\n';
  }
  return out;
}

std::string Trace::chrome_json() const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto begin_event = [&] {
    if (!first) out += ',';
    first = false;
    out += "\n{";
  };
  // Thread names: one track per thread.
  for (std::uint64_t id = 0; id < std::max<std::size_t>(thread_names_.size(), 1); ++id) {
    if (id != 0 && thread_names_[id].empty()) continue;
    begin_event();
    out += "\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(id) +
           ",\"name\":\"thread_name\",\"args\":{\"name\":";
    append_json_string(out, std::string(thread_name(id)) + " #" + std::to_string(id));
    out += "}}";
  }
  // The args every event carries: its object's id, a named object's name, its location.
  auto append_args = [&](std::uint64_t object, bool named, const SourceLocation& where) {
    out += ",\"args\":{\"object\":" + std::to_string(object);
    const std::string_view object_name = named ? this->object_name(object) : std::string_view();
    if (!object_name.empty()) {
      out += ",\"object_name\":";
      append_json_string(out, object_name);
    }
    out += ",\"where\":";
    std::string loc;
    append_location(loc, where);
    append_json_string(out, loc);
    out += "}}";
  };
  // `text`, then event `e`'s object if it names one (`Mutex::lock "accounts" #3`).
  auto with_object = [&](std::string text, const Event& e) {
    if (names_an_object(e)) {
      if (!text.empty()) text += ' ';
      append_object(text, e.object, object_name(e.object));
    }
    return text;
  };
  // A complete slice on `thread`'s track, ending at `end` after `length`; `named`: `object` is
  // an object's id, whose name (if any) goes into the args.
  auto slice = [&](std::uint64_t thread, Duration end, Duration length, std::string_view name,
                   std::uint64_t object, bool named, const SourceLocation& where) {
    begin_event();
    out += "\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(thread) + ",\"ts\":";
    append_micros(out, end - length);
    out += ",\"dur\":";
    append_micros(out, length);
    out += ",\"name\":";
    append_json_string(out, name);
    append_args(object, named, where);
  };
  // Blocked spans: from a block event to the next wake/timeout/exit of the same thread.
  struct Open {
    bool open = false;
    const Event* start = nullptr;
  };
  std::vector<Open> open(thread_names_.size() + 1);
  auto close_span = [&](const Event& end) {
    if (end.thread >= open.size() || !open[end.thread].open) return;
    const Event& s = *open[end.thread].start;
    open[end.thread].open = false;
    slice(s.thread, end.time, end.time - s.time,
          with_object(s.what.empty() ? std::string("blocked") : std::string(s.what), s), s.object,
          names_an_object(s), s.where);
  };

  const std::vector<bool> keep = shown();
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (!keep[i]) continue;
    const Event& e = events_[i];
    if (e.thread >= open.size()) open.resize(e.thread + 1);
    switch (e.kind) {
      case EventKind::block:
        open[e.thread] = Open{true, &e};
        continue;
      case EventKind::acquire:
        if (e.contended) {
          slice(e.thread, e.time, e.span, with_object(std::string(lock_class(e.what)), e) + " wait",
                e.object, true, e.where);
        }
        continue;
      case EventKind::release:
        slice(e.thread, e.time, e.span, with_object(std::string(lock_class(e.what)), e) + " held",
              e.object, true, e.where);
        continue;
      case EventKind::span_begin:
        continue;  // The span's slice is written at its end, which knows its length.
      case EventKind::span_end:
        slice(e.thread, e.time, e.span, e.what, e.object, false, e.where);
        continue;
      case EventKind::wake:
      case EventKind::timeout:
      case EventKind::exit:
        close_span(e);
        break;
      default:
        break;
    }
    begin_event();
    out += "\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":" + std::to_string(e.thread) + ",\"ts\":";
    append_micros(out, e.time);
    out += ",\"name\":";
    std::string name = e.kind == EventKind::note ? std::string() : kind_name(e.kind);
    if (!e.what.empty()) {
      if (!name.empty()) name += ' ';
      name += e.what;
    }
    append_json_string(out, with_object(std::move(name), e));
    append_args(e.object, names_an_object(e), e.where);
  }
  // Spans still open at the end (threads blocked at a deadlock) end at the last event's time.
  if (!events_.empty()) {
    Event end = events_.back();
    for (std::uint64_t id = 0; id < open.size(); ++id) {
      if (!open[id].open) continue;
      end.thread = id;
      close_span(end);
    }
  }
  out += "\n]}\n";
  return out;
}

void TraceSpan::begin(std::string_view name, SourceLocation where) {
  name_ = detail::trace_record(Trace::EventKind::span_begin, name, 0, where);
  start_ = detail::trace_now();
  where_ = where;
  recorded_ = true;
}

void TraceSpan::end() noexcept {
  // A span ends within the run it began in, where tracing is still on (the check guards a span
  // object that outlived its bubble thread).
  if (!detail::tl_tracing) return;
  detail::trace_record(Trace::EventKind::span_end, name_, 0, where_, detail::trace_now() - start_);
}

}  // namespace bubble
