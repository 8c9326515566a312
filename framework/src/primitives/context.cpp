#include <bubble/context.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <bubble/bubble.hpp>
#include <bubble/detail/park_steps.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>

#include "primitives/parking.hpp"

namespace bubble {
namespace detail {
namespace {

// The thread that runs a callback, or deregisters one.
struct CallingThread {
  const void* token;   // Identifies the thread (Runtime::current_thread_token).
  Runtime* bubble;     // The bubble it runs in (a bubble thread or timer callback), or nullptr.
  bool bubble_thread;  // A thread of `bubble`, which can park (not one of its timer callbacks).
};

// In a bubble every thread shares the OS thread: a bubble thread has a token of its own, while a
// timer callback (which never switches threads) has its OS thread's, the system runtime's token.
CallingThread calling_thread() {
  Runtime& rt = current_runtime();
  const void* const os_thread = system_runtime().current_thread_token();
  if (!rt.controlled()) return {os_thread, nullptr, false};
  const void* const token = rt.current_thread_token();
  return {token, &rt, token != os_thread};
}

[[noreturn]] void abort_wait_in_timer_callback(const Runtime& rt) noexcept {
  std::fprintf(stderr,
               "bubble: a Context::Callback was destroyed in a timer callback of %s while its "
               "function runs on a thread of that bubble; a timer callback cannot wait for it. "
               "Aborting.\n",
               std::string(rt.name()).c_str());
  std::abort();
}

}  // namespace

// The shared state of one context. Lock order: a context's lock is never held while another
// context's lock is taken, and never while a callback runs.
class ContextState final : public ContextStateBase,
                           public std::enable_shared_from_this<ContextState> {
 public:
  ContextState() = default;
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;

  ~ContextState() {
    // A child that is destroyed before it ends leaves its parent's list.
    if (parent) parent->remove(parent_node);
  }

  // Links `node` and returns true, or returns false (linking nothing) if the context is done.
  bool add(ContextCallbackNode& node) noexcept {
    std::lock_guard<SpinLock> guard(lock);
    if (status.load(std::memory_order_relaxed) != 0) return false;
    callbacks.push_back(node);
    return true;
  }

  // Deregisters `node`: unlinks it if it is still linked; if the cancelling thread is running it
  // on another thread, waits until it has returned (parking, if both are threads of one bubble);
  // if it is running on this thread, tells the canceller not to touch the node again.
  void remove(ContextCallbackNode& node) noexcept {
    Waiter waiter;
    bool parks = false;
    CallingThread self{};
    {
      std::lock_guard<SpinLock> guard(lock);
      if (callbacks.contains(node)) {
        callbacks.remove(node);
        return;
      }
      if (node.running_on == nullptr) return;  // Never ran, or finished.
      self = calling_thread();
      if (node.running_on == self.token) {
        *node.destroyed = true;
        node.destroyed = nullptr;
        node.running_on = nullptr;
        return;
      }
      if (node.running_runtime != nullptr && node.running_runtime == self.bubble) {
        // Preempted inside the callback, on this OS thread: spinning would never let it finish.
        if (!self.bubble_thread) abort_wait_in_timer_callback(*self.bubble);
        self.bubble->prepare(waiter);
        node.remover = &waiter;
        parks = true;
      }
    }
    if (parks) {
      park_until_finished(*self.bubble, waiter);
      return;
    }
    for (int spins = 0; !node.finished.load(std::memory_order_acquire); ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
  }

  // Ends the context with `err` (canceled or deadline_exceeded) and `why` (empty: err), unless
  // it already ended. Runs the callbacks (which cancel the children) on the calling thread.
  void cancel(errc err, std::error_code why) noexcept {
    TimerId timer_id = 0;
    {
      std::lock_guard<SpinLock> guard(lock);
      if (status.load(std::memory_order_relaxed) != 0) return;
      cause = why ? why : make_error_code(err);
      status.store(static_cast<int>(err), std::memory_order_release);
      timer_id = timer;
      timer = 0;
    }
    if (timer_id != 0) timer_runtime->cancel_timer(timer_id);
    run_callbacks();
    // An ended child needs nothing more from its parent.
    if (parent) parent->remove(parent_node);
  }

  // Registers this (new) context as a child of `p`; ends it at once if `p` has ended.
  void attach_to(std::shared_ptr<ContextState> p) noexcept {
    deadline = p->deadline;
    if (!p->can_end) return;
    parent = std::move(p);
    parent_node.owner = this;
    parent_node.invoke = &ContextState::parent_ended;
    if (!parent->add(parent_node)) {
      cancel(static_cast<errc>(parent->status.load(std::memory_order_acquire)), parent->cause);
    }
  }

  SpinLock lock;
  std::error_code cause;              // Written once, before status is published.
  std::optional<TimePoint> deadline;  // Immutable once the context is published.
  Runtime* timer_runtime = nullptr;
  TimerId timer = 0;
  std::uint64_t id = 0;
  // The registered callbacks (Callbacks and children's parent_node), in registration order.
  IntrusiveList<ContextCallbackNode, &ContextCallbackNode::hook> callbacks;
  std::shared_ptr<ContextState> parent;
  ContextCallbackNode parent_node;

 private:
  static void parent_ended(ContextCallbackNode* node) noexcept {
    auto* child = static_cast<ContextState*>(node->owner);
    // Null when the child is being destroyed on another thread (its destructor waits for us).
    std::shared_ptr<ContextState> keep = child->weak_from_this().lock();
    if (!keep) return;
    const ContextState& p = *child->parent;
    child->cancel(static_cast<errc>(p.status.load(std::memory_order_acquire)), p.cause);
  }

  void run_callbacks() noexcept {
    const CallingThread self = calling_thread();
    for (;;) {
      ContextCallbackNode* node;
      bool destroyed = false;
      {
        std::lock_guard<SpinLock> guard(lock);
        node = callbacks.pop_front();
        if (node == nullptr) return;
        node->running_on = self.token;
        node->running_runtime = self.bubble_thread ? self.bubble : nullptr;
        node->destroyed = &destroyed;
      }
      node->invoke(node);
      if (!destroyed) {
        std::lock_guard<SpinLock> guard(lock);
        node->destroyed = nullptr;
        node->running_on = nullptr;
        // Read before `finished` is published: a spinning remover (another OS thread) may
        // destroy the node as soon as it sees the flag. A parked remover (a thread of this
        // bubble) cannot run before the unpark, which does not switch threads.
        Waiter* const remover = node->remover;
        node->finished.store(true, std::memory_order_release);
        if (remover != nullptr) self.bubble->unpark(*remover);
      }
    }
  }

  // Parks the calling bubble thread until the cancelling thread has unparked `waiter` (it does
  // when the callback returns). The wait must end even while the bubble is torn down, since the
  // caller is a destructor: if park throws bubble::Unwind, the wait goes on during the rethrow,
  // when park blocks normally (no Unwind while an exception is in flight), and the Unwind is then
  // swallowed; the thread's next blocking call throws another.
  void park_until_finished(Runtime& rt, Waiter& waiter) noexcept {
    const WaitInfo what{"Context::Callback::~Callback", id, SourceLocation{}};
    struct ParkOnUnwind {
      Runtime& rt;
      Waiter& waiter;
      const WaitInfo& what;
      ~ParkOnUnwind() { detail::park_until_notified(rt, waiter, what); }
    };
    try {
      try {
        detail::park_until_notified(rt, waiter, what);
      } catch (const Unwind&) {
        ParkOnUnwind wait_while_rethrowing{rt, waiter, what};
        throw;
      }
    } catch (const Unwind&) {
    }
  }
};

struct AfterDoneState {
  enum : int { kArmed = 0, kStarted = 1, kStopped = 2 };
  std::atomic<int> state{kArmed};
  std::function<void()> fn;
  Runtime* rt = nullptr;
  std::optional<Context::Callback> callback;
  std::shared_ptr<AfterDoneState> self;  // Keeps the registration alive while armed.

  void fire() noexcept {
    int expected = kArmed;
    if (!state.compare_exchange_strong(expected, kStarted, std::memory_order_acq_rel)) return;
    std::shared_ptr<AfterDoneState> keep = std::move(self);
    // Detached: the runtime reclaims the thread when fn returns.
    detach(rt->spawn("after_done", std::move(fn)));
  }
};

namespace {

ContextState& state_of(const std::shared_ptr<ContextStateBase>& base) noexcept {
  return static_cast<ContextState&>(*base);
}

// The runtime whose timer ends the context at its deadline, or nullptr if it has none.
const Runtime* deadline_runtime(ContextState& s) noexcept {
  std::lock_guard<SpinLock> guard(s.lock);
  return s.timer_runtime;
}

}  // namespace
}  // namespace detail

using detail::ContextState;

Context::Context() : Context(background()) {}

const Context* Context::make_background() {
  return new Context(std::make_shared<ContextState>());
}

std::pair<Context, CancelFunc> Context::with_cancel(const Context& parent) {
  return with_cancel(parent, std::string_view());
}

std::pair<Context, CancelFunc> Context::with_cancel(const Context& parent, std::string_view name) {
  auto state = std::make_shared<ContextState>();
  state->can_end = true;
  state->id = current_runtime().new_object_id(name);
  const auto parent_state = std::static_pointer_cast<ContextState>(parent.state_);
  state->attach_to(parent_state);
  return {Context(state), CancelFunc(state)};
}

std::pair<Context, CancelFunc> Context::with_deadline(const Context& parent, TimePoint deadline,
                                                      Runtime& rt) {
  return with_deadline(parent, deadline, std::string_view(), rt);
}

std::pair<Context, CancelFunc> Context::with_deadline(const Context& parent, TimePoint deadline,
                                                      std::string_view name, Runtime& rt) {
  const std::optional<TimePoint> inherited = parent.deadline();
  if (inherited && *inherited <= deadline) return with_cancel(parent, name);
  auto state = std::make_shared<ContextState>();
  state->can_end = true;
  state->id = rt.new_object_id(name);
  state->attach_to(std::static_pointer_cast<ContextState>(parent.state_));
  state->deadline = deadline;
  if (state->status.load(std::memory_order_acquire) == 0) {
    if (deadline <= rt.now()) {
      state->cancel(errc::deadline_exceeded, {});
    } else {
      std::weak_ptr<ContextState> weak = state;
      const TimerId id = rt.schedule_at(deadline, [weak] {
        if (std::shared_ptr<ContextState> s = weak.lock()) s->cancel(errc::deadline_exceeded, {});
      });
      bool ended;
      {
        std::lock_guard<detail::SpinLock> guard(state->lock);
        ended = state->status.load(std::memory_order_relaxed) != 0;
        if (!ended) {
          state->timer = id;
          state->timer_runtime = &rt;
        }
      }
      if (ended) rt.cancel_timer(id);
    }
  }
  return {Context(state), CancelFunc(state)};
}

std::pair<Context, CancelFunc> Context::with_timeout(const Context& parent, Duration timeout,
                                                     Runtime& rt) {
  return with_timeout(parent, timeout, std::string_view(), rt);
}

std::pair<Context, CancelFunc> Context::with_timeout(const Context& parent, Duration timeout,
                                                     std::string_view name, Runtime& rt) {
  // A timeout of zero or less ends the context at once.
  return with_deadline(parent, deadline_after(rt.now(), timeout), name, rt);
}

std::uint64_t Context::id() const noexcept {
  return detail::state_of(state_).id;
}

std::error_code Context::cause() const noexcept {
  const ContextState& s = detail::state_of(state_);
  if (s.status.load(std::memory_order_acquire) == 0) return {};
  return s.cause;
}

std::size_t Context::registrations() const noexcept {
  ContextState& s = detail::state_of(state_);
  std::lock_guard<detail::SpinLock> guard(s.lock);
  return s.callbacks.size();
}

std::optional<TimePoint> Context::deadline() const noexcept {
  return detail::state_of(state_).deadline;
}

void Context::wait(SourceLocation where) const {
  if (const Runtime* timer_rt = detail::deadline_runtime(detail::state_of(state_))) {
    // A context with a deadline waits for its runtime's timer: the caller must run on it.
    detail::check_caller_on(timer_rt, "Context", detail::state_of(state_).id, "Context::wait");
  }
  Runtime& rt = current_runtime();
  const WaitInfo what{"Context::wait", detail::state_of(state_).id, where};
  if (rt.controlled()) rt.schedule_point(what);
  if (done()) return;
  Waiter waiter;
  rt.prepare(waiter);
  // The callback runs at most once and the Callback's destructor waits for it, so the waiter
  // outlives every unpark.
  Callback wake(*this, [&rt, &waiter] { rt.unpark(waiter); });
  detail::park_until_notified(rt, waiter, what);
}

void CancelFunc::operator()(std::error_code cause) const {
  // A reference of its own: cancelling may wake a thread that then destroys this CancelFunc and
  // every other handle on the context while cancel() is still running.
  if (const std::shared_ptr<detail::ContextStateBase> state = state_) {
    detail::state_of(state).cancel(errc::canceled, cause);
  }
}

Context::Callback::Callback(const Context& ctx, std::function<void()> fn)
    : fn_(std::move(fn)), state_(ctx.state_) {
  if (!fn_) throw std::invalid_argument("bubble::Context::Callback: fn must not be empty");
  node_.owner = this;
  node_.invoke = &Callback::invoke;
  if (!state_->can_end) return;
  if (!detail::state_of(state_).add(node_)) invoke(&node_);
}

Context::Callback::~Callback() {
  if (state_->can_end) detail::state_of(state_).remove(node_);
}

void Context::Callback::invoke(detail::ContextCallbackNode* node) noexcept {
  static_cast<Callback*>(node->owner)->fn_();
}

bool AfterDone::stop() {
  if (!state_) return false;
  int expected = detail::AfterDoneState::kArmed;
  if (!state_->state.compare_exchange_strong(expected, detail::AfterDoneState::kStopped,
                                             std::memory_order_acq_rel)) {
    return false;
  }
  state_->callback.reset();
  std::shared_ptr<detail::AfterDoneState> keep = std::move(state_->self);
  return true;
}

AfterDone after_done(const Context& ctx, std::function<void()> fn, Runtime& rt) {
  if (!fn) throw std::invalid_argument("bubble::after_done: fn must not be empty");
  AfterDone handle;
  auto state = std::make_shared<detail::AfterDoneState>();
  state->fn = std::move(fn);
  state->rt = &rt;
  handle.state_ = state;
  if (!ctx.can_end()) return handle;
  state->self = state;
  detail::AfterDoneState* raw = state.get();
  state->callback.emplace(ctx, [raw] { raw->fire(); });
  return handle;
}

}  // namespace bubble
