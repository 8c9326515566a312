// The Context property of the primitives suite: a generated tree of contexts, each watched by a
// thread that records when it ended and why, against a model of deadline inheritance and
// cancellation.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/scenarios/primitive_properties.hpp>
#include <bubble/scenarios/show.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

enum class ContextKind { with_cancel, with_timeout, with_deadline };

// Context i of a tree. Creations are at whole milliseconds and deadlines too; cancellations at
// half milliseconds, so that no cancellation shares an instant with a deadline (ties between two
// deadlines end both ways with deadline_exceeded).
struct ContextNode {
  int parent = -1;  // -1: background()
  ContextKind kind = ContextKind::with_cancel;
  int created_ms = 0;  // not before its parent's creation
  int timeout_ms = 0;  // with_timeout: created + timeout; with_deadline: the deadline itself
  int cancel_ms = -1;  // cancelled at cancel_ms + 0.5 ms (after its creation), -1: never
  bool cause = false;  // cancelled with the cause errc::closed (otherwise none)
};

void showValue(const ContextNode& n, std::ostream& os) {
  os << "{parent=" << n.parent << ", ";
  switch (n.kind) {
    case ContextKind::with_cancel:
      os << "with_cancel";
      break;
    case ContextKind::with_timeout:
      os << "with_timeout(" << n.timeout_ms << "ms)";
      break;
    case ContextKind::with_deadline:
      os << "with_deadline(" << n.timeout_ms << "ms)";
      break;
  }
  os << " at " << n.created_ms << "ms";
  if (n.cancel_ms >= 0) {
    os << ", cancelled at " << n.cancel_ms << ".5ms" << (n.cause ? " with cause closed" : "");
  }
  os << "}";
}

struct ContextTree {
  std::vector<ContextNode> nodes;
};

void showValue(const ContextTree& t, std::ostream& os) {
  os << "ContextTree[";
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    os << (i == 0 ? "" : ", ") << i << "=";
    showValue(t.nodes[i], os);
  }
  os << "]";
}

rc::Gen<ContextTree> context_tree() {
  return rc::gen::exec([] {
    ContextTree t;
    const int n = *rc::gen::inRange(1, 7);
    int created = 0;
    for (int i = 0; i < n; ++i) {
      ContextNode node;
      node.parent = i == 0 ? -1 : *rc::gen::inRange(-1, i);
      node.kind = *rc::gen::element(ContextKind::with_cancel, ContextKind::with_timeout,
                                    ContextKind::with_deadline);
      created += *rc::gen::inRange(0, 20);
      node.created_ms = created;
      node.timeout_ms = node.kind == ContextKind::with_deadline ? *rc::gen::inRange(0, 120)
                                                                : *rc::gen::inRange(0, 60);
      if (*rc::gen::inRange(0, 3) != 0) node.cancel_ms = created + *rc::gen::inRange(0, 60);
      node.cause = *rc::gen::arbitrary<bool>();
      t.nodes.push_back(node);
    }
    return t;
  });
}

// The model of one context: its deadline, and when and how it ends (nullopt: never).
struct ContextEnd {
  Duration at{};
  std::error_code err;
  std::error_code cause;
};

struct ContextModel {
  std::optional<Duration> deadline;
  std::optional<ContextEnd> end;
};

std::vector<ContextModel> model_of(const ContextTree& t) {
  std::vector<ContextModel> m(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const ContextNode& n = t.nodes[i];
    const Duration created = std::chrono::milliseconds(n.created_ms);
    std::optional<Duration> parent_deadline;
    std::optional<ContextEnd> parent_end;
    if (n.parent >= 0) {
      parent_deadline = m[static_cast<std::size_t>(n.parent)].deadline;
      parent_end = m[static_cast<std::size_t>(n.parent)].end;
    }
    m[i].deadline = parent_deadline;
    std::optional<Duration> own;
    if (n.kind != ContextKind::with_cancel) {
      own = n.kind == ContextKind::with_timeout ? created + std::chrono::milliseconds(n.timeout_ms)
                                                : std::chrono::milliseconds(n.timeout_ms);
      if (!m[i].deadline || *own < *m[i].deadline) m[i].deadline = own;
    }
    std::optional<ContextEnd> end = parent_end;
    if (parent_end && parent_end->at <= created) {
      end->at = created;  // a child of a done parent is done at once, as its parent
    } else {
      auto earlier = [&end](ContextEnd e) {
        if (!end || e.at < end->at) end = e;
      };
      if (own) earlier({*own, errc::deadline_exceeded, errc::deadline_exceeded});
      if (n.cancel_ms >= 0) {
        earlier({std::chrono::milliseconds(n.cancel_ms) + 500us, errc::canceled,
                 n.cause ? std::error_code(errc::closed) : std::error_code(errc::canceled)});
      }
      if (end && end->at < created) end->at = created;  // a passed deadline: done at once
    }
    m[i].end = end;
  }
  return m;
}

std::string show_end(const std::optional<ContextEnd>& e) {
  if (!e) return "never";
  return "at " + show_duration(e->at) + " with err '" + e->err.message() + "' and cause '" +
         e->cause.message() + "'";
}

}  // namespace

void contexts_inherit_deadlines_and_cancellation() {
  const ContextTree t = testing::draw(context_tree());
  const StrategyValue strategy = testing::draw(case_strategy());
  const std::vector<ContextModel> model = model_of(t);
  Options options;
  options.strategy = strategy.value;
  options.max_steps = 100'000;
  testing::run_property(options, [&](Runtime& rt) {
    const TimePoint start = rt.now();
    const std::size_t n = t.nodes.size();
    std::vector<Context> ctx(n);
    std::vector<CancelFunc> cancel(n);
    std::vector<std::optional<ContextEnd>> seen(n);
    std::vector<std::unique_ptr<ThreadHandle>> threads;
    // The first broken promise, reported once every watcher has been released and joined.
    std::string broken;
    // The events in time order: creation of i at created_ms (in index order), cancellation of i
    // at cancel_ms + 0.5 ms.
    std::vector<std::pair<Duration, std::size_t>> events;  // (when, i or n + i for a cancel)
    for (std::size_t i = 0; i < n; ++i) {
      events.emplace_back(std::chrono::milliseconds(t.nodes[i].created_ms), i);
      if (t.nodes[i].cancel_ms >= 0) {
        events.emplace_back(std::chrono::milliseconds(t.nodes[i].cancel_ms) + 500us, n + i);
      }
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& event : events) {
      const Duration when = event.first;
      const std::size_t e = event.second;  // a variable, not a binding: the watcher captures it
      if (rt.now() - start < when) rt.sleep_for(when - (rt.now() - start));
      if (e >= n) {
        const std::size_t i = e - n;
        if (t.nodes[i].cause) {
          cancel[i](errc::closed);
        } else {
          cancel[i]();
        }
        continue;
      }
      const ContextNode& node = t.nodes[e];
      const Context& parent =
          node.parent < 0 ? Context::background() : ctx[static_cast<std::size_t>(node.parent)];
      std::pair<Context, CancelFunc> made =
          node.kind == ContextKind::with_cancel ? Context::with_cancel(parent)
          : node.kind == ContextKind::with_timeout
              ? Context::with_timeout(parent, std::chrono::milliseconds(node.timeout_ms), rt)
              : Context::with_deadline(parent, start + std::chrono::milliseconds(node.timeout_ms),
                                       rt);
      ctx[e] = made.first;
      cancel[e] = made.second;
      const std::optional<TimePoint> deadline = ctx[e].deadline();
      const std::optional<TimePoint> expected =
          model[e].deadline ? std::optional<TimePoint>(start + *model[e].deadline) : std::nullopt;
      if (deadline != expected && broken.empty()) {
        broken = "context " + std::to_string(e) + "'s deadline() is " +
                 (deadline ? show_duration(*deadline - start) : std::string("none")) +
                 ", expected " +
                 (expected ? show_duration(*expected - start) : std::string("none")) +
                 " (the earlier of its own and its parent's)";
      }
      threads.push_back(rt.spawn("watcher-" + std::to_string(e), [&, e, c = ctx[e]] {
        c.wait();
        seen[e] = ContextEnd{rt.now() - start, c.err(), c.cause()};
      }));
    }
    rt.sleep_for(1s);  // past every deadline
    bubble::wait();
    for (std::size_t i = 0; i < n; ++i) {
      const auto& e = model[i].end;
      const auto& s = seen[i];
      const bool same =
          (!e && !s) || (e && s && e->at == s->at && e->err == s->err && e->cause == s->cause);
      if (!same && broken.empty()) {
        broken =
            "context " + std::to_string(i) + " ended " + show_end(s) + ", expected " + show_end(e);
      }
    }
    for (CancelFunc& c : cancel) c();  // releases the watchers of contexts that never end
    for (auto& th : threads) th->join();
    if (!broken.empty()) BUBBLE_FAIL(broken);
  });
}

}  // namespace bubble::scenarios
