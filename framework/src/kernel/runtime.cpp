#include <bubble/runtime.hpp>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

#include <bubble/context.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/random.hpp>

namespace bubble {
namespace {

// The runtime whose thread is running on this OS thread; nullptr means the system runtime.
thread_local Runtime* tl_current_runtime = nullptr;

}  // namespace

// The process-wide registry of live runtimes: an intrusive list through Runtime::live_hook_, so
// that registering never allocates (Runtime's constructor is noexcept). Constant-
// initialized and trivially destructible, so it works before main and during static destruction.
// Consulted only on the primitives' error path, to name a primitive's runtime without
// dereferencing one that has ended.
struct RuntimeRegistry {
  static constinit inline std::atomic<std::uint64_t> next_serial{1};
  static constinit inline detail::SpinLock lock;
  static constinit inline detail::IntrusiveList<Runtime, &Runtime::live_hook_> live;

  static void add(Runtime& rt) noexcept {
    std::lock_guard guard(lock);
    live.push_back(rt);
  }
  static void remove(Runtime& rt) noexcept {
    std::lock_guard guard(lock);
    live.remove(rt);
  }
  // True if `rt` is alive and check_caller would accept a call from this thread on a primitive
  // of `rt`. (A Context keeps only the address of its runtime: one reused by a newer runtime
  // reads as that runtime.)
  static bool accepts_caller(const Runtime* rt) noexcept {
    std::lock_guard guard(lock);
    // `rt` may have ended: compare addresses, never dereference it.
    for (const Runtime& r : live) {
      if (&r == rt) return detail::binding_of(r) == detail::tl_controlled_serial;
    }
    return false;
  }
  // "runtime '<name>'" if the runtime is alive, "a bubble that has ended" otherwise (the system
  // runtime never ends, so a dead runtime was a bubble, or a test's own runtime). A controlled
  // runtime is found by `binding` (its serial), an uncontrolled one by its address.
  static std::string describe(std::uint64_t binding, const Runtime* rt) {
    std::lock_guard guard(lock);
    for (const Runtime& r : live) {
      if (binding != 0 ? r.serial_ == binding : &r == rt) {
        return "runtime '" + std::string(r.name()) + "'";
      }
    }
    return "a bubble that has ended";
  }
};

Runtime::Runtime(bool controlled) noexcept
    : controlled_(controlled),
      serial_(RuntimeRegistry::next_serial.fetch_add(1, std::memory_order_relaxed)) {
  RuntimeRegistry::add(*this);
}

const void* Runtime::controlled_thread_token() const noexcept {
  return &tl_os_thread_token_;
}

Runtime::~Runtime() {
  RuntimeRegistry::remove(*this);
}

void Runtime::name_object(std::uint64_t /*id*/, std::string_view /*name*/) {}

void Runtime::synchronize(std::uint64_t /*object*/, bool /*release*/) {}

namespace detail {

constinit thread_local std::uint64_t tl_controlled_serial = 0;

void set_current_runtime(Runtime* runtime) noexcept {
  tl_current_runtime = runtime;
  tl_controlled_serial = runtime != nullptr ? binding_of(*runtime) : 0;
}

void throw_foreign_caller(std::uint64_t binding, const Runtime* runtime, const char* primitive,
                          std::uint64_t id, const char* operation) {
  throw std::logic_error("bubble::" + std::string(primitive) + " #" + std::to_string(id) +
                         " belongs to " + RuntimeRegistry::describe(binding, runtime) + ", but " +
                         operation + " was called on a thread of runtime '" +
                         std::string(current_runtime().name()) +
                         "': a primitive may only be used by the threads of its own runtime "
                         "(construct it inside the bubble, or pass it the bubble's runtime)");
}

void check_caller_on(const Runtime* runtime, const char* primitive, std::uint64_t id,
                     const char* operation) {
  if (RuntimeRegistry::accepts_caller(runtime)) return;
  throw_foreign_caller(0, runtime, primitive, id, operation);
}

}  // namespace detail

Runtime& current_runtime() noexcept {
  Runtime* rt = tl_current_runtime;
  return rt != nullptr ? *rt : system_runtime();
}

bool in_bubble() noexcept {
  const Runtime* rt = tl_current_runtime;
  return rt != nullptr && rt->controlled();
}

std::size_t Runtime::choose(std::size_t n, const WaitInfo& /*what*/) {
  if (n <= 1) return 0;
  return static_cast<std::size_t>(random().below(n));
}

void Runtime::sleep_until(TimePoint deadline, SourceLocation where) {
  // Nothing but the deadline ends it, and time moves only when every thread is blocked.
  const WaitInfo what{.kind = "sleep", .where = where, .private_wait = true};
  if (deadline <= now()) {
    // A sleep that is already over only gives the processor away, as a yield.
    if (controlled()) schedule_point({.kind = "sleep", .where = where, .progress = Progress::none});
    return;
  }
  // Nobody unparks this waiter: park returns when the deadline passes.
  Waiter waiter;
  prepare(waiter);
  while (park(waiter, deadline, what) != ParkResult::timed_out) {
  }
}

void Runtime::sleep_for(Duration d, SourceLocation where) {
  if (d <= Duration::zero()) {
    sleep_until(now(), where);
    return;
  }
  // Saturating: a sleep past the end of time is a sleep with no deadline.
  sleep_until(deadline_after(now(), d), where);
}

void sleep_for(Duration d, SourceLocation where) {
  current_runtime().sleep_for(d, where);
}

void sleep_until(TimePoint deadline, SourceLocation where) {
  current_runtime().sleep_until(deadline, where);
}

void yield(SourceLocation where) {
  current_runtime().yield(where);
}

// --- Sleeps that a context can cut short --------------------------------------------------------

namespace {

// What the context's callback shares with the sleeping thread. The callback unparks the sleeper
// only while `claimed` is false, under `lock`; the sleeper sets `claimed` under `lock` once its
// park has returned. So the unpark, if any, has completed before the sleeper leaves (and the
// Callback's destructor waits for a callback that is still running anyway).
struct ContextSleep {
  Runtime* rt;
  Waiter waiter;
  detail::SpinLock lock;
  bool claimed = false;
};

}  // namespace

std::error_code Runtime::sleep_until(TimePoint deadline, const Context& ctx, SourceLocation where) {
  if (!ctx.can_end()) {
    sleep_until(deadline, where);
    return {};
  }
  const WaitInfo what{"sleep", 0, where};
  if (ctx.done() || deadline <= now()) {
    if (controlled()) schedule_point({.kind = "sleep", .where = where, .progress = Progress::none});
    if (deadline <= now()) return {};  // A sleep that is already over has elapsed in full.
    return ctx.err();
  }
  ContextSleep sleep{this, {}, {}, false};
  prepare(sleep.waiter);
  {
    const Context::Callback wake(ctx, [s = &sleep] {
      std::lock_guard<detail::SpinLock> guard(s->lock);
      if (!s->claimed) {
        s->claimed = true;
        s->rt->unpark(s->waiter);
      }
    });
    (void)park(sleep.waiter, deadline, what);
    // From here on the callback no longer touches the waiter; if it unparked it, it is done.
    const std::lock_guard<detail::SpinLock> guard(sleep.lock);
    sleep.claimed = true;
  }
  if (now() >= deadline) return {};
  return ctx.err();
}

std::error_code Runtime::sleep_for(Duration d, const Context& ctx, SourceLocation where) {
  if (d <= Duration::zero()) return sleep_until(now(), ctx, where);
  return sleep_until(deadline_after(now(), d), ctx, where);
}

std::error_code sleep_for(Duration d, const Context& ctx, SourceLocation where) {
  return current_runtime().sleep_for(d, ctx, where);
}

std::error_code sleep_until(TimePoint deadline, const Context& ctx, SourceLocation where) {
  return current_runtime().sleep_until(deadline, ctx, where);
}

}  // namespace bubble
