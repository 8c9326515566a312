#include "engine/report/thread_report.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

namespace bubble::detail {
namespace {

// What makes threads one group: state, kind and location (file and line).
using GroupKey = std::tuple<std::string_view, std::string_view, std::string_view, std::uint32_t>;

GroupKey key_of(const ReportedThread& t) {
  return {t.state, t.kind, std::string_view(t.where.file_name()),
          static_cast<std::uint32_t>(t.where.line())};
}

struct Group {
  std::size_t count = 0;
  std::size_t first = 0;  // Index of its first member in the listing.
  std::vector<std::size_t> examples;
  std::vector<std::uint64_t> objects;  // The object ids of its members (blocked groups).
};

std::string thread_line(const ReportedThread& t) {
  std::string out = "  thread #" + std::to_string(t.id) + " \"" + std::string(t.name) +
                    "\": " + std::string(t.state);
  if (t.blocked) {
    if (!t.blocked_on.empty()) {
      out += " on " + t.blocked_on;
    } else {
      out += " on " + std::string(t.kind);
      if (t.object_id != 0) out += " (object #" + std::to_string(t.object_id) + ")";
    }
    out += " at " + (t.user_location.empty() ? location_text(t.where) : t.user_location);
    out += t.after_location;
  } else {
    out += ", last at " + std::string(t.kind) + " " + location_text(t.where);
  }
  return out + "\n" + t.details;
}

std::string group_line(const std::vector<ReportedThread>& threads, Group& g) {
  const ReportedThread& t = threads[g.first];
  std::string out = "  " + with_thousands_separators(g.count) + " threads " + std::string(t.state);
  if (t.blocked) {
    out += " on " + std::string(t.kind);
    std::sort(g.objects.begin(), g.objects.end());
    g.objects.erase(std::unique(g.objects.begin(), g.objects.end()), g.objects.end());
    if (g.objects.size() == 1 && g.objects[0] != 0) {
      out += " (object #" + std::to_string(g.objects[0]) + ")";
    } else if (g.objects.size() > 1) {
      out += " (on " + with_thousands_separators(g.objects.size()) + " objects)";
    }
    out += " at " + location_text(t.where);
  } else {
    out += ", last at " + std::string(t.kind) + " " + location_text(t.where);
  }
  out += ":";
  for (std::size_t i = 0; i < g.examples.size(); ++i) {
    const ReportedThread& e = threads[g.examples[i]];
    out += (i == 0 ? " #" : ", #") + std::to_string(e.id) + " \"" + std::string(e.name) + "\"";
  }
  out += " and " + with_thousands_separators(g.count - g.examples.size()) + " more\n";
  return out;
}

}  // namespace

std::string location_text(const SourceLocation& where) {
  if (where.line() == 0) {
    // A file without a line: a place described in words (the interposer's "pthread_mutex_lock
    // called from my_tests+0x4f2a1").
    return where.file_name()[0] != '\0' ? std::string(where.file_name()) : "(unknown location)";
  }
  return std::string(where.file_name()) + ":" + std::to_string(where.line());
}

std::string with_thousands_separators(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_thread_report(const std::vector<ReportedThread>& threads) {
  std::map<GroupKey, std::size_t> index;
  std::vector<Group> groups;
  std::vector<std::size_t> group_of(threads.size());
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const auto [it, added] = index.try_emplace(key_of(threads[i]), groups.size());
    if (added) {
      groups.emplace_back();
      groups.back().first = i;
    }
    Group& g = groups[it->second];
    ++g.count;
    if (g.examples.size() < kReportGroupExamples) g.examples.push_back(i);
    if (threads[i].blocked) g.objects.push_back(threads[i].object_id);
    group_of[i] = it->second;
  }
  std::string out;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    Group& g = groups[group_of[i]];
    if (g.count <= kReportGroupAbove) {
      out += thread_line(threads[i]);
    } else if (g.first == i) {
      out += group_line(threads, g);
    }
  }
  return out;
}

}  // namespace bubble::detail
