// The public free functions of the bubble (bubble::run, bubble::wait, ...) and the hooks other
// parts of the framework reach the running bubble through (bubble::random, trace markers, the
// interposer's slot).

#include <cerrno>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <bubble/detail/intercept.hpp>

#include "engine/bubble.hpp"
#include "engine/random_key.hpp"

namespace bubble {
namespace engine {

Random* Bubble::random_source() noexcept {
  std::optional<Random>& r = current_ != nullptr ? current_->random : callback_random_;
  if (!r) {
    r.emplace(current_ != nullptr ? current_->random_key
                                  : detail::derive_random_key(random_key_, 0));
  }
  return &*r;
}

void Bubble::wait(SourceLocation where) {
  BThread* t = current_;
  if (t == nullptr) {
    throw std::logic_error("bubble::wait: called from a timer callback of " + name_);
  }
  if (waiter_ != nullptr) {
    throw std::logic_error("bubble::wait: thread \"" + t->name +
                           "\" called wait() while thread \"" + waiting_thread_->name +
                           "\" is already waiting in " + name_);
  }
  Waiter w;
  prepare(w);
  waiter_ = &w;
  waiting_thread_ = t;
  struct Reset {
    Bubble* b;
    ~Reset() {
      b->waiter_ = nullptr;
      b->waiting_thread_ = nullptr;
    }
  } reset{this};
  park(w, kNoDeadline, WaitInfo{"bubble::wait", 0, where});
  // What the other threads did before they blocked happens before wait() returns.
  if (races_) races_->waited(race_thread());
}

}  // namespace engine

using engine::Bubble;
using engine::tl_bubble;

RunResult run(const Options& options, std::function<void(Runtime&)> root) {
  if (tl_bubble != nullptr || in_bubble()) {
    throw std::logic_error(std::string("bubble::run: called inside ") +
                           std::string(current_runtime().name()) + "; bubbles cannot be nested");
  }
  if (!root) throw std::invalid_argument("bubble::run: empty root function");
  // The caller finds its errno as it left it, whatever the run's own system calls on this OS
  // thread set (the watchdog's start, which waits on a futex; stack mappings; the teardown): the
  // run's threads each have an errno of their own, and this thread's is restored last, after the
  // Bubble is gone.
  struct KeepErrno {
    int saved = errno;
    ~KeepErrno() { errno = saved; }
  } keep_errno;
  Bubble bubble(options);
  return bubble.execute(std::move(root));
}

RunResult run(std::function<void(Runtime&)> root) {
  return run(Options{}, std::move(root));
}

void wait(SourceLocation where) {
  Bubble* b = tl_bubble;
  if (b == nullptr) throw std::logic_error("bubble::wait: called outside a bubble");
  b->wait(where);
}

void sleep_and_wait(Duration d, SourceLocation where) {
  sleep_for(d, where);
  wait(where);
}

namespace detail {
Random* bubble_random() noexcept {
  return tl_bubble != nullptr ? tl_bubble->random_source() : nullptr;
}

std::string_view trace_record(Trace::EventKind kind, std::string_view what, std::uint64_t object,
                              SourceLocation where, Duration span, bool contended) {
  return tl_bubble->record_marker(kind, what, object, where, span, contended);
}

Duration trace_now() noexcept {
  return tl_bubble->elapsed();
}

constinit thread_local Runtime* tl_intercepting_runtime = nullptr;

namespace {
constinit thread_local FailureObserver tl_failure_observer = nullptr;
constinit thread_local void* tl_failure_observer_context = nullptr;
}  // namespace

void set_failure_observer(FailureObserver observer, void* context) noexcept {
  tl_failure_observer = observer;
  tl_failure_observer_context = context;
}

std::pair<FailureObserver, void*> failure_observer() noexcept {
  return {tl_failure_observer, tl_failure_observer_context};
}

void** intercepted_thread_slot() noexcept {
  return tl_bubble != nullptr ? tl_bubble->intercept_slot() : nullptr;
}

InterceptedRunState* intercepted_run_state() noexcept {
  return tl_bubble != nullptr ? tl_bubble->intercept_run_state() : nullptr;
}

void fail_intercepted_run(const std::string& what, std::string_view operation,
                          SourceLocation where) {
  if (tl_bubble != nullptr) tl_bubble->fail_on_current_thread(what, operation, where);
}
}  // namespace detail

}  // namespace bubble
