// The parts of a bubble's failure report about who waits for whom (see
// engine/report/wait_graph.hpp).

#include "engine/report/wait_graph.hpp"

#include <cstddef>
#include <vector>

namespace bubble::detail {
namespace {

std::string thread_text(const ReportThread& t) {
  return "thread #" + std::to_string(t.id) + " \"" + std::string(t.name) + "\"";
}

const std::string* name_of(std::uint64_t object_id, const ReportView& view) {
  if (view.names == nullptr) return nullptr;
  const auto it = view.names->find(object_id);
  return it != view.names->end() ? &it->second : nullptr;
}

// The class of the object an operation is on: "Mutex" for "Mutex::lock".
std::string_view class_of(std::string_view kind) {
  const std::size_t colons = kind.find("::");
  return colons == std::string_view::npos ? kind : kind.substr(0, colons);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

const ReportThread* thread_with_token(const void* token, const ReportView& view) {
  for (const ReportThread& t : view.threads) {
    if (t.token == token) return &t;
  }
  return nullptr;
}

const ReportThread* thread_with_id(std::uint64_t id, const ReportView& view) {
  for (const ReportThread& t : view.threads) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

WaitDetail detail_of(const WaitInfo& what) {
  WaitDetail detail;
  if (what.describe != nullptr) what.describe(what.object, detail);
  return detail;
}

// The edge of the wait-for graph out of `t`: the thread it certainly waits for, or nullptr.
// `object` receives how the edge reads ("Mutex "audit" held by", "to join").
const ReportThread* waits_for(const ReportThread& t, const ReportView& view, std::string* object) {
  if (t.what == nullptr) return nullptr;
  const WaitInfo& what = *t.what;
  if (what.kind == "Thread::join") {
    *object = "to join";
    return thread_with_id(what.object_id, view);
  }
  if (what.describe == nullptr) return nullptr;
  const WaitDetail detail = detail_of(what);
  if (detail.holder == nullptr) return nullptr;
  const ReportThread* holder = thread_with_token(detail.holder, view);
  if (holder == nullptr) return nullptr;
  const std::string* name = name_of(what.object_id, view);
  *object = "for " + std::string(class_of(what.kind)) + " " +
            (name != nullptr ? "\"" + *name + "\"" : "#" + std::to_string(what.object_id)) +
            " held by";
  return holder;
}

}  // namespace

std::string blocked_on_text(const WaitInfo& what, const ReportView& view) {
  std::string out(what.kind);
  if (what.object_id == 0) return out;
  // A join's id is the joined thread's, not an object's: it has no object name.
  const bool names_an_object = what.kind != "Thread::join";
  if (const std::string* name = names_an_object ? name_of(what.object_id, view) : nullptr) {
    out += " \"" + *name + "\"";
  }
  out += " (object #" + std::to_string(what.object_id) + ")";
  return out;
}

std::string blocked_detail_lines(const ReportThread& thread, const ReportView& view) {
  if (thread.what == nullptr) return {};
  const WaitInfo& what = *thread.what;
  std::string out;
  if (what.describe != nullptr) {
    const WaitDetail detail = detail_of(what);
    if (detail.holder != nullptr) {
      const ReportThread* holder = thread_with_token(detail.holder, view);
      out += "    held by " +
             (holder != nullptr ? thread_text(*holder) : std::string("a thread that has ended")) +
             " since +" + format_duration(detail.held_since - view.start) + "\n";
    }
    if (!detail.state.empty()) out += "    " + detail.state + "\n";
  }
  // A channel: the threads blocked on its other side (a receiver for a sender, and the reverse).
  const bool sending = starts_with(what.kind, "Channel::send");
  const bool receiving = starts_with(what.kind, "Channel::receive");
  if (sending || receiving) {
    const std::string_view other = sending ? "Channel::receive" : "Channel::send";
    std::string others;
    for (const ReportThread& t : view.threads) {
      if (t.what == nullptr || &t == &thread || t.what->object_id != what.object_id) continue;
      if (!starts_with(t.what->kind, other)) continue;
      others += (others.empty() ? "" : ", ") + thread_text(t);
    }
    if (others.empty()) {
      out += sending ? "    no receiver\n" : "    no sender\n";
    } else {
      out += std::string(sending ? "    receivers: " : "    senders: ") + others + "\n";
    }
  }
  return out;
}

std::string cycle_lines(const ReportView& view) {
  // Every thread has at most one out-edge, so following edges from a thread either ends or
  // enters a cycle; a cycle is reported once, from its thread with the smallest id.
  const std::size_t n = view.threads.size();
  std::vector<const ReportThread*> next(n, nullptr);
  std::vector<std::string> edge(n);
  auto index_of = [&](const ReportThread* t) {
    return static_cast<std::size_t>(t - view.threads.data());
  };
  for (std::size_t i = 0; i < n; ++i) next[i] = waits_for(view.threads[i], view, &edge[i]);

  std::string out;
  std::vector<bool> reported(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    // Walk at most n edges from i: if we come back to i, i is on a cycle.
    std::size_t at = i;
    bool on_cycle = false;
    std::uint64_t smallest = view.threads[i].id;
    for (std::size_t steps = 0; steps < n && next[at] != nullptr; ++steps) {
      at = index_of(next[at]);
      if (at == i) {
        on_cycle = true;
        break;
      }
      if (view.threads[at].id < smallest) smallest = view.threads[at].id;
    }
    if (!on_cycle || reported[i] || view.threads[i].id != smallest) continue;
    at = i;
    do {
      reported[at] = true;
      out += (at == i ? "cycle: " : "       ") + thread_text(view.threads[at]) + " waits " +
             edge[at] + " " + thread_text(*next[at]) + "\n";
      at = index_of(next[at]);
    } while (at != i);
  }
  return out;
}

}  // namespace bubble::detail
