#include <bubble/trace.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
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

std::string Trace::text() const {
  std::string out;
  out.reserve(events_.size() * 64);
  for (const Event& e : events_) {
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
    if (e.object != 0) {
      out += " #";
      out += std::to_string(e.object);
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
    begin_event();
    out += "\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(s.thread) + ",\"ts\":";
    append_micros(out, s.time);
    out += ",\"dur\":";
    append_micros(out, end.time - s.time);
    out += ",\"name\":";
    append_json_string(out, s.what.empty() ? std::string_view("blocked") : s.what);
    out += ",\"args\":{\"object\":" + std::to_string(s.object) + ",\"where\":";
    std::string loc;
    append_location(loc, s.where);
    append_json_string(out, loc);
    out += "}}";
  };
  for (const Event& e : events_) {
    if (e.thread >= open.size()) open.resize(e.thread + 1);
    switch (e.kind) {
      case EventKind::block:
        open[e.thread] = Open{true, &e};
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
    std::string name = kind_name(e.kind);
    if (!e.what.empty()) {
      name += ' ';
      name += e.what;
    }
    append_json_string(out, name);
    out += ",\"args\":{\"object\":" + std::to_string(e.object) + ",\"where\":";
    std::string loc;
    append_location(loc, e.where);
    append_json_string(out, loc);
    out += "}}";
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

}  // namespace bubble
