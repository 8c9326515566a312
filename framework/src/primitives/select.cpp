// bubble::select: the algorithm of Go's selectgo on the runtime kernel.
//
// 1. Lock every channel of the select, in address order (each once), so that no other thread
//    changes them meanwhile. (In a bubble a channel takes no lock: its threads switch only at
//    scheduling points, and none happens inside a select's critical sections.)
// 2. Poll: list the cases that can complete now, in argument order; if there are any, let the
//    runtime choose one (Runtime::choose: a recorded scheduling decision in a bubble, uniform on
//    the system runtime) and complete it. Completing can fail only on the system runtime, when it
//    meets a waiting select that another channel's waker claims at that moment: then poll again.
// 3. None can: return the default case if there is one; otherwise queue one waiter per channel
//    case, each marked with the select's SelectClaim, and unlock.
// 4. Register a Context::Callback per context case, park until a waker (or a callback) has
//    claimed the select and completed its case, deregister the callbacks, and unlink, under each
//    channel's lock, the waiters of the cases that did not win.

#include <bubble/detail/park_steps.hpp>
#include <bubble/detail/select_claim.hpp>
#include <bubble/detail/select_engine.hpp>

#include <cstddef>
#include <functional>

namespace bubble::detail {
namespace {

bool is_channel_case(const SelectCase& c) noexcept {
  return c.kind == SelectCaseKind::receive || c.kind == SelectCaseKind::send;
}

// Holds the locks of every channel case, taken in address order (a channel that appears in
// several cases is locked once), so that two selects over the same channels never deadlock.
class SelectLocks {
 public:
  SelectLocks(SelectCase* cases, const std::size_t* order, std::size_t m) noexcept
      : cases_(cases), order_(order), m_(m) {
    for (std::size_t i = 0; i < m_; ++i) {
      if (i == 0 || channel(i) != channel(i - 1)) ops(i).lock(channel(i));
    }
  }
  SelectLocks(const SelectLocks&) = delete;
  SelectLocks& operator=(const SelectLocks&) = delete;
  ~SelectLocks() {
    for (std::size_t i = m_; i-- > 0;) {
      if (i == 0 || channel(i) != channel(i - 1)) ops(i).unlock(channel(i));
    }
  }

 private:
  void* channel(std::size_t i) const noexcept { return cases_[order_[i]].channel; }
  const SelectChannelOps& ops(std::size_t i) const noexcept { return *cases_[order_[i]].ops; }
  SelectCase* const cases_;
  const std::size_t* const order_;
  const std::size_t m_;
};

bool ready(const SelectCase& c) noexcept {
  switch (c.kind) {
    case SelectCaseKind::receive:
    case SelectCaseKind::send:
      return c.ops->ready(c.channel, c.kind == SelectCaseKind::send);
    case SelectCaseKind::done:
      return c.context->done();
    case SelectCaseKind::absent:
      return false;
  }
  return false;
}

// Race detection's view of a select over channels: as a channel operation is (Channel's
// RaceSection), a critical section of each channel's lock, all of them held together. Acquires
// every channel when the select starts and after its wait, releases every one before the wait and
// when it ends. Does nothing unless the runtime checks races.
void synchronize_channels(Runtime& rt, const SelectCase* cases, const WaitInfo* parts,
                          std::size_t n, bool release) {
  if (!rt.checks_races()) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_channel_case(cases[i])) continue;
    if (release) {
      rt.sync_release(parts[i].object_id);
    } else {
      rt.sync_acquire(parts[i].object_id);
    }
  }
}

bool complete(SelectCase& c, WakeList& wake) noexcept {
  switch (c.kind) {
    case SelectCaseKind::receive:
    case SelectCaseKind::send:
      return c.ops->complete(c.channel, c.kind == SelectCaseKind::send, c.waiter, wake);
    case SelectCaseKind::done:
      return c.context->done();  // Once done, a context stays done.
    case SelectCaseKind::absent:
      return false;
  }
  return false;
}

}  // namespace

std::size_t run_select(SelectCase* cases, std::size_t n, bool has_default, std::size_t* order,
                       const WaitInfo* parts, SourceLocation where) {
  Runtime& rt = current_runtime();
  const WaitInfo point{"select", 0, where};
  if (rt.controlled()) rt.schedule_point(point);
  synchronize_channels(rt, cases, parts, n, false);

  // The channel cases, sorted by channel address (insertion sort: a handful of cases).
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_channel_case(cases[i])) continue;
    std::size_t j = m++;
    while (j > 0 && std::less<void*>{}(cases[i].channel, cases[order[j - 1]].channel)) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = i;
  }

  SelectClaim claim;
  Waiter wake;
  claim.wake = &wake;
  {
    WakeList woken(rt);  // Destroyed after the locks: unparks with every lock released.
    SelectLocks locks(cases, order, m);
    while (true) {
      std::size_t ready_count = 0;
      for (std::size_t i = 0; i < n; ++i) ready_count += ready(cases[i]) ? 1 : 0;
      if (ready_count == 0) break;
      std::size_t k = rt.choose(ready_count, point);
      for (std::size_t i = 0; i < n; ++i) {
        if (!ready(cases[i])) continue;
        if (k-- != 0) continue;
        if (complete(cases[i], woken)) {
          synchronize_channels(rt, cases, parts, n, true);
          return i;
        }
        break;  // A waiting select was claimed by another waker meanwhile: poll again.
      }
    }
    if (has_default) {
      synchronize_channels(rt, cases, parts, n, true);
      return n;
    }
    rt.prepare(wake);
    for (std::size_t j = 0; j < m; ++j) {
      SelectCase& c = cases[order[j]];
      mark_select_waiter(c.waiter, claim);
      c.waiter.status = 0;
      c.ops->enqueue(c.channel, c.kind == SelectCaseKind::send, c.waiter);
    }
  }

  // Unlinks the waiters that are still queued (cases that did not win). Called once no waker can
  // claim the select any more, or while unwinding.
  const auto cleanup = [&]() noexcept {
    for (std::size_t i = 0; i < n; ++i) cases[i].on_done.reset();  // Waits for a running callback.
    for (std::size_t j = 0; j < m; ++j) {
      SelectCase& c = cases[order[j]];
      c.ops->lock(c.channel);
      c.ops->unlink(c.channel, c.kind == SelectCaseKind::send, c.waiter);
      c.ops->unlock(c.channel);
    }
  };

  const WaitInfo what{"select", 0, where, parts, n};
  try {
    for (std::size_t i = 0; i < n; ++i) {
      SelectCase& c = cases[i];
      if (c.kind != SelectCaseKind::done || !c.context->can_end()) continue;
      // Runs on the cancelling thread, or here if the context is already done; captures two
      // pointers, so std::function keeps it without allocating.
      mark_select_waiter(c.waiter, claim);
      c.on_done.emplace(*c.context, [&rt, &c] {
        if (claim_waiter(c.waiter)) rt.unpark(wake_target(c.waiter));
      });
    }
    synchronize_channels(rt, cases, parts, n, true);  // Leaving the channels to wait.
    detail::park_until_notified(rt, wake, what);
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  synchronize_channels(rt, cases, parts, n, false);
  synchronize_channels(rt, cases, parts, n, true);
  for (std::size_t i = 0; i < n; ++i) {
    if (&cases[i].waiter == claim.winner) return i;
  }
  return n;  // Unreachable: the select was woken by its winner.
}

}  // namespace bubble::detail
