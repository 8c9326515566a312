#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include <bubble/context.hpp>
#include <bubble/detail/context_wait.hpp>
#include <bubble/detail/park_steps.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/select_claim.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/detail/wake_list.hpp>
#include <bubble/errc.hpp>
#include <bubble/result.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

namespace detail {
template <class T>
struct SelectChannel;  // bubble::select's access to a channel (select.hpp).
}  // namespace detail

// Channel<T> is a Go channel: a first-in-first-out queue of T values between threads, buffered
// (capacity > 0) or unbuffered (capacity 0), that can be closed.
//
// - Unbuffered: a send completes only when a receiver takes the value (hand-off); a receive
//   completes only when a sender gives it one.
// - Buffered: a send completes at once while fewer than capacity() values are buffered; a receive
//   completes at once while a value is buffered. Otherwise they wait.
// - Waiting senders and waiting receivers are each served first-come first-served: a value sent
//   to a channel with waiting receivers goes directly to the one that has waited longest; when a
//   receive frees a buffer slot (or, unbuffered, takes a value), the sender that has waited
//   longest completes.
// - close() ends the channel: later sends fail with errc::closed, waiting senders fail with
//   errc::closed (their values are dropped); receives drain the values still buffered and only
//   then fail with errc::closed.
// - An operation whose context is already done when it starts returns ctx.err() without touching
//   the channel, even if it could have completed at once; one whose context ends while it waits
//   returns ctx.err(), and its value (for a send) was not delivered.
//
// Every public operation except the accessors and try_send_from_callback starts with a scheduling
// point when the runtime is controlled (a bubble). Blocking uses the runtime's parking protocol,
// so a channel works unchanged on the system runtime and in a bubble.
//
// Thread safety: all members may be called concurrently from threads of the channel's runtime.
// In a bubble those threads run one at a time on the bubble's OS thread and switch only at
// scheduling points, so the channel takes no lock there: call it only from the bubble's threads
// and timer callbacks. Runtime check: send, try_send, receive, receive_until, try_receive and
// close throw std::logic_error at once, changing nothing, when the calling thread does not run on
// the channel's runtime — a system-runtime channel used by a bubble thread, a bubble's channel
// used by another thread, or used after its bubble ended (also from the thread that called
// bubble::run: the message then says "a bubble that has ended"; the check compares pointers and
// never touches the ended runtime). The accessors (size, closed, waiting_*, capacity, id) and
// try_send_from_callback and discard_buffered (entries for callbacks, which may run on another
// thread) do not check; the accessors never touch the runtime, so they stay usable after the
// bubble ended.
// Lifetime: a channel may be destroyed as soon as a wait on it (a send or receive) has returned
// and no thread waits on it, even while the operation that completed the waiter (a send, receive
// or close) is still returning; destroying it while a thread waits in send or receive is
// undefined behaviour.
//
// T must be move-constructible without throwing (values move under the channel's spin lock), and
// must not be std::error_code or an error code enum: receive returns Result<T>, whose error is a
// std::error_code, so such a value would read as an error. Wrap one in a struct of its own.
template <class T>
class Channel {
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "bubble::Channel<T>: T must be nothrow move-constructible");
  static_assert(!std::is_same_v<std::remove_cv_t<T>, std::error_code> &&
                    !std::is_error_code_enum_v<std::remove_cv_t<T>>,
                "bubble::Channel<T>: T must not be std::error_code or an error code enum: receive "
                "returns Result<T>, whose error is a std::error_code; wrap the code in a struct");

 public:
  using value_type = T;

  // A channel with room for `capacity` buffered values (0: unbuffered), whose waits use `rt`.
  // The buffer is allocated at construction.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): it delegates.
  explicit Channel(std::size_t capacity = 0, Runtime& rt = current_runtime())
      : Channel(std::string_view(), capacity, rt) {}
  // The same, called `name` in deadlock reports (Channel::send "results" (object #4)); the name
  // is recorded once, here.
  explicit Channel(std::string_view name, std::size_t capacity = 0, Runtime& rt = current_runtime())
      : rt_(&rt),
        binding_(detail::binding_of(rt)),
        id_(rt.new_object_id(name)),
        capacity_(capacity) {
    if (capacity_ > 0) ring_ = std::make_unique<std::optional<T>[]>(capacity_);
  }

  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Sends `value`, waiting while the channel has no room (unbuffered: until a receiver takes it).
  // Returns {} once the value is buffered or handed to a receiver; errc::closed if the channel is
  // closed (before or while waiting); ctx.err() if `ctx` is done before the call or ends while it
  // waits. On failure the value is dropped.
  [[nodiscard]] std::error_code send(T value, const Context& ctx = Context::background(),
                                     SourceLocation where = SourceLocation::current()) {
    detail::check_caller(binding_, rt_, "Channel", id_, "Channel::send");
    if (binding_ != 0) return send_in_bubble(value, ctx, where);
    return send_locking(value, ctx, where);
  }

  // Sends `value` only if that completes at once: a waiting receiver takes it, or a buffer slot is
  // free. Returns {}, errc::closed, or errc::full (unbuffered: no receiver is waiting). Never
  // blocks. A scheduling point in a bubble.
  [[nodiscard]] std::error_code try_send(T value,
                                         SourceLocation where = SourceLocation::current()) {
    detail::check_caller(binding_, rt_, "Channel", id_, "Channel::try_send");
    if (rt_->controlled()) {
      rt_->schedule_point({.kind = "Channel::try_send",
                           .object_id = id_,
                           .where = where,
                           .progress = Progress::maybe});
    }
    const RaceSection section(*this);
    return try_send_from_callback(std::move(value));
  }

  // try_send without the scheduling point, for runtime timer callbacks (which run outside the
  // runtime's threads and must never switch threads) and Context callbacks. Never blocks.
  [[nodiscard]] std::error_code try_send_from_callback(T value) {
    detail::WakeList wake = wake_list();
    Lock lock(*this);
    if (closed_) return errc::closed;
    if (offer_locked(value, wake)) return {};
    return errc::full;
  }

  // Receives the oldest value, waiting while there is none. Returns the value; errc::closed once
  // the channel is closed and no value is buffered (or closed while waiting); ctx.err() if `ctx`
  // is done before the call or ends while it waits.
  Result<T> receive(const Context& ctx = Context::background(),
                    SourceLocation where = SourceLocation::current()) {
    return receive_impl(ctx, kNoDeadline, {"Channel::receive", id_, where});
  }

  // Like receive(), but waits at most until `deadline` on the channel's runtime's clock: returns
  // errc::timed_out if no value arrived by then (at once if the deadline has passed and no value
  // is available).
  Result<T> receive_until(TimePoint deadline, SourceLocation where = SourceLocation::current()) {
    return receive_impl(Context::background(), deadline, {"Channel::receive_until", id_, where});
  }

  // Receives a value only if one is available at once (buffered, or offered by a waiting sender).
  // Returns the value, errc::closed (closed and drained) or errc::empty. Never blocks.
  Result<T> try_receive(SourceLocation where = SourceLocation::current()) {
    detail::check_caller(binding_, rt_, "Channel", id_, "Channel::try_receive");
    if (rt_->controlled()) {
      rt_->schedule_point({.kind = "Channel::try_receive",
                           .object_id = id_,
                           .where = where,
                           .progress = Progress::maybe});
    }
    const RaceSection section(*this);
    detail::WakeList wake = wake_list();
    Lock lock(*this);
    if (std::optional<T> v = take_locked(wake)) return std::move(*v);
    if (closed_) return errc::closed;
    return errc::empty;
  }

  // Closes the channel and wakes every waiting sender (errc::closed) and receiver (errc::closed:
  // a receiver waits only when nothing is buffered). Buffered values stay receivable. Closing a
  // closed channel throws std::logic_error. Never blocks.
  void close(SourceLocation where = SourceLocation::current()) {
    detail::check_caller(binding_, rt_, "Channel", id_, "Channel::close");
    if (rt_->controlled()) rt_->schedule_point({"Channel::close", id_, where});
    const RaceSection section(*this);
    // Unparks once the lock is released, or at once in a bubble (a dequeued waiter stays until it
    // is unparked, see await), touching only the waiters and the runtime: a woken thread may
    // destroy the channel as soon as it runs.
    detail::WakeList wake = wake_list();
    Lock lock(*this);
    if (closed_) throw std::logic_error("bubble::Channel: close of a closed channel");
    closed_ = true;
    while (Waiter* r = detail::pop_claimed(receivers_)) {
      r->status = kClosed;
      wake.add(detail::wake_target(*r));
    }
    while (Waiter* s = detail::pop_claimed(senders_)) {
      s->status = kClosed;
      wake.add(detail::wake_target(*s));
    }
  }

  // Destroys every buffered value and returns how many there were. Senders that were waiting for
  // room then fill the freed slots, in arrival order, and complete, as if receivers had taken the
  // discarded values. No scheduling point: used by Timer and Ticker (whose channels never have
  // waiting senders), also from timer callbacks. Never blocks.
  std::size_t discard_buffered() noexcept {
    detail::WakeList wake = wake_list();
    Lock lock(*this);
    const std::size_t n = count_;
    while (count_ > 0) (void)pop_locked();
    while (count_ < capacity_) {
      Waiter* s = detail::pop_claimed(senders_);
      if (s == nullptr) break;
      push_locked(*static_cast<T*>(s->data));
      s->status = kDone;
      wake.add(detail::wake_target(*s));
    }
    return n;
  }

  // The number of buffered values (a snapshot).
  std::size_t size() const noexcept {
    Lock lock(*this);
    return count_;
  }
  // The capacity given at construction (0: unbuffered).
  std::size_t capacity() const noexcept { return capacity_; }
  // True once close() has been called.
  bool closed() const noexcept {
    Lock lock(*this);
    return closed_;
  }
  // The number of threads waiting in send / in receive (a snapshot; for tests and monitoring:
  // a test can poll it to know that a thread has started waiting). A thread blocked in
  // bubble::select counts once per case it has on this channel, until its select returns.
  std::size_t waiting_senders() const noexcept {
    Lock lock(*this);
    return senders_.size();
  }
  std::size_t waiting_receivers() const noexcept {
    Lock lock(*this);
    return receivers_.size();
  }
  // The object id given by the runtime (shown in traces and deadlock reports).
  std::uint64_t id() const noexcept { return id_; }
  Runtime& runtime() const noexcept { return *rt_; }

 private:
  friend struct detail::SelectChannel<T>;

  // Waiter::status values.
  enum : int { kPending = 0, kDone, kClosed, kCanceled, kTimedOut };

  // send in a bubble (controlled): no lock, wake-ups at once (see wake_list). Apart from
  // send_locking, so that neither path's registers and frame weigh on the other.
  std::error_code send_in_bubble(T& value, const Context& ctx, SourceLocation where) {
    const WaitInfo what{"Channel::send", id_, where};
    rt_->schedule_point(what);
    const RaceSection section(*this);
    if (ctx.done()) return ctx.err();
    if (closed_) return errc::closed;
    detail::UnparkAtOnce wake(*rt_);
    if (offer_locked(value, wake)) return {};
    return send_slow(value, ctx, what);
  }

  // send on a runtime that is not controlled: under the spin lock.
  std::error_code send_locking(T& value, const Context& ctx, SourceLocation where) {
    const WaitInfo what{"Channel::send", id_, where};
    {
      detail::WakeList wake = wake_list();
      Lock lock(*this);
      if (ctx.done()) return ctx.err();
      if (closed_) return errc::closed;
      if (offer_locked(value, wake)) return {};
    }
    return send_slow(value, ctx, what);
  }

  Result<T> receive_impl(const Context& ctx, TimePoint deadline, const WaitInfo& what) {
    detail::check_caller(binding_, rt_, "Channel", id_, what.kind.data());
    if (binding_ != 0) {  // A bubble, as in send.
      rt_->schedule_point(what);
      const RaceSection section(*this);
      if (ctx.done()) return ctx.err();
      detail::UnparkAtOnce wake(*rt_);
      if (std::optional<T> v = take_locked(wake)) return std::move(*v);
      if (closed_) return errc::closed;
      return receive_wait_in_bubble(ctx, deadline, what);
    }
    {
      detail::WakeList wake = wake_list();
      Lock lock(*this);
      if (ctx.done()) return ctx.err();
      if (std::optional<T> v = take_locked(wake)) return std::move(*v);
      if (closed_) return errc::closed;
    }
    return receive_slow(ctx, deadline, what);
  }

  // The waiting half of receive in a bubble: the channel is as receive_impl's look left it (see
  // send_slow), and there is no lock. Apart from receive_slow, as send_in_bubble is from
  // send_locking.
  Result<T> receive_wait_in_bubble(const Context& ctx, TimePoint deadline, const WaitInfo& what) {
    if (deadline != kNoDeadline && deadline <= rt_->now()) {
      return errc::timed_out;  // Nothing ran since that look: no value, not closed.
    }
    Waiter waiter;
    std::optional<T> slot;
    rt_->prepare(waiter);
    if (ctx.done()) return ctx.err();
    waiter.data = &slot;
    waiter.status = kPending;
    receivers_.push_back(waiter);
    return received(await(waiter, receivers_, ctx, deadline, what), slot, ctx);
  }

  // The waiting half of send: binds a waiter (outside the spin lock), looks again, then queues
  // and parks. In a bubble the second look only checks the context: no other thread of the
  // bubble ran since the first look (prepare is no scheduling point), so the channel is as that
  // look left it, while a context may be cancelled from any OS thread.
  std::error_code send_slow(T& value, const Context& ctx, const WaitInfo& what) {
    Waiter waiter;
    rt_->prepare(waiter);
    if (binding_ != 0) {
      if (ctx.done()) return ctx.err();
      waiter.data = &value;
      waiter.status = kPending;
      senders_.push_back(waiter);
    } else {
      detail::WakeList wake = wake_list();
      Lock lock(*this);
      if (ctx.done()) return ctx.err();
      if (closed_) return errc::closed;
      if (offer_locked(value, wake)) return {};
      waiter.data = &value;
      waiter.status = kPending;
      senders_.push_back(waiter);
    }
    switch (await(waiter, senders_, ctx, kNoDeadline, what)) {
      case kDone:
        return {};
      case kClosed:
        return errc::closed;
      default:
        return ctx.err();
    }
  }

  // The waiting half of receive on a runtime that is not controlled: binds a waiter (outside the
  // spin lock), looks again under the lock, then queues and parks.
  Result<T> receive_slow(const Context& ctx, TimePoint deadline, const WaitInfo& what) {
    if (deadline != kNoDeadline && deadline <= rt_->now()) {
      detail::WakeList wake = wake_list();
      Lock lock(*this);
      if (std::optional<T> v = take_locked(wake)) return std::move(*v);
      if (closed_) return errc::closed;
      return errc::timed_out;
    }
    Waiter waiter;
    std::optional<T> slot;
    rt_->prepare(waiter);
    {
      detail::WakeList wake = wake_list();
      Lock lock(*this);
      if (ctx.done()) return ctx.err();
      if (std::optional<T> v = take_locked(wake)) return std::move(*v);
      if (closed_) return errc::closed;
      waiter.data = &slot;
      waiter.status = kPending;
      receivers_.push_back(waiter);
    }
    return received(await(waiter, receivers_, ctx, deadline, what), slot, ctx);
  }

  // What a receive that waited returns, from its waiter's final status.
  static Result<T> received(int status, std::optional<T>& slot, const Context& ctx) {
    switch (status) {
      case kDone:
        return std::move(*slot);
      case kClosed:
        return errc::closed;
      case kTimedOut:
        return errc::timed_out;
      default:
        return ctx.err();
    }
  }

  // Parks on `waiter` (already in `queue`) until a waker completes it, `ctx` ends or `deadline`
  // passes; returns the waiter's final status.
  //
  // Wakers dequeue a waiter and set its status under the lock but unpark it after releasing the
  // lock (a detail::WakeList declared before the lock, see wake_list), so that a woken thread may
  // destroy the channel at once. So a waiter that finds itself dequeued after a timeout parks
  // again until its waker's unpark arrives: a Waiter never goes away before its unpark.
  int await(Waiter& waiter, detail::WaitQueue& queue, const Context& ctx, TimePoint deadline,
            const WaitInfo& what) {
    if (!ctx.can_end()) {
      // background(): nothing can cancel the wait, so no Callback to register (the hot path).
      park_until_done(waiter, queue, deadline, what);
      return waiter.status;
    }
    return await_cancellable(waiter, queue, ctx, deadline, what);
  }

  // await with a context that can end: out of line, so that the hot path above (inlined into
  // send and receive) saves no registers for the callback's registration.
  [[gnu::noinline]] int await_cancellable(Waiter& waiter, detail::WaitQueue& queue,
                                          const Context& ctx, TimePoint deadline,
                                          const WaitInfo& what) {
    {
      // Ends the wait with kCanceled when ctx ends; its destructor waits for a callback that is
      // still running, so `waiter` outlives it. The lock is the one Lock takes.
      detail::EndWaitOnDone on_cancel(*rt_, binding_ != 0 ? nullptr : &lock_, queue, waiter,
                                      kCanceled);
      on_cancel.arm(&ctx);
      park_until_done(waiter, queue, deadline, what);
    }
    return waiter.status;
  }

  // The parking half of await: parks until the waiter is unparked by the waker that dequeued it
  // (or, after a timeout, dequeues it itself and sets kTimedOut).
  void park_until_done(Waiter& waiter, detail::WaitQueue& queue, TimePoint deadline,
                       const WaitInfo& what) {
    ParkResult parked;
    try {
      rt_->sync_release(id_);  // Leaving the critical section to wait (see RaceSection).
      parked = rt_->park(waiter, deadline, what);
      rt_->sync_acquire(id_);
    } catch (...) {
      // The bubble unwinds a blocked thread by throwing from park: leave no dead waiter behind.
      Lock lock(*this);
      if (waiter.queued()) queue.remove(waiter);
      throw;
    }
    if (parked == ParkResult::timed_out) [[unlikely]]
      finish_timed_out(waiter, queue, what);
  }

  // park_until_done after a timeout: dequeues the waiter and sets kTimedOut, or, if a waker
  // dequeued it first, waits for that waker's unpark. Out of line: a timeout is a wait's rare end.
  [[gnu::noinline]] void finish_timed_out(Waiter& waiter, detail::WaitQueue& queue,
                                          const WaitInfo& what) {
    if (!detail::finish_timed_out_park(*rt_, queue, waiter, what, [this] { return Lock(*this); })) {
      waiter.status = kTimedOut;  // Dequeued here: nobody else touches the waiter.
    }
  }

  // Race detection's model of a channel in a bubble, where it takes no lock: every operation is a
  // critical section of one lock, as on real threads. Runtime::sync_acquire when an operation
  // starts and when a wait ends, sync_release when it waits and when it ends, so that whatever a
  // thread did in or before its operation (values it moved in, waiters it queued) happens before
  // any later operation on the channel. Does nothing unless the runtime checks races.
  class RaceSection {
   public:
    explicit RaceSection(const Channel& c) : rt_(*c.rt_), id_(c.id_) { rt_.sync_acquire(id_); }
    ~RaceSection() { rt_.sync_release(id_); }
    RaceSection(const RaceSection&) = delete;
    RaceSection& operator=(const RaceSection&) = delete;

   private:
    Runtime& rt_;
    const std::uint64_t id_;
  };

  // The wake-ups of one call. In a bubble the channel takes no lock (see Lock) and no woken
  // thread runs before the waker's next scheduling point or park, so the list unparks at once;
  // on real threads it unparks when it is destroyed, after the Lock declared after it.
  detail::WakeList wake_list() const noexcept { return detail::WakeList(*rt_, binding_ != 0); }

  // Guards the channel's state: holds the spin lock on an uncontrolled runtime, and does nothing
  // on a controlled one (a bubble), whose threads run one at a time on one OS thread and switch
  // only at scheduling points and parks, which no critical section contains: there the lock could
  // never be contended, and skipping it saves an atomic exchange per critical section.
  class Lock {
   public:
    explicit Lock(const Channel& c) noexcept : lock_(c.binding_ != 0 ? nullptr : &c.lock_) {
      if (lock_ != nullptr) lock_->lock();
    }
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    ~Lock() {
      if (lock_ != nullptr) lock_->unlock();
    }

   private:
    detail::SpinLock* const lock_;
  };

  // Gives `value` to the longest-waiting receiver or to the buffer; false if neither can take it.
  // `wake` (a detail::WakeList, or detail::UnparkAtOnce in a bubble) gets the receiver it wakes.
  template <class Wake>
  bool offer_locked(T& value, Wake& wake) noexcept {
    if (Waiter* r = detail::pop_claimed(receivers_)) {
      static_cast<std::optional<T>*>(r->data)->emplace(std::move(value));
      r->status = kDone;
      wake.add(detail::wake_target(*r));
      return true;
    }
    if (count_ < capacity_) {
      push_locked(value);
      return true;
    }
    return false;
  }

  // Takes the oldest buffered value (refilling the buffer from the longest-waiting sender) or,
  // unbuffered, the value of the longest-waiting sender; nullopt if there is none. `wake` as in
  // offer_locked.
  template <class Wake>
  std::optional<T> take_locked(Wake& wake) noexcept {
    if (count_ > 0) {
      std::optional<T> v = pop_locked();
      if (Waiter* s = detail::pop_claimed(senders_)) {
        push_locked(*static_cast<T*>(s->data));
        s->status = kDone;
        wake.add(detail::wake_target(*s));
      }
      return v;
    }
    if (Waiter* s = detail::pop_claimed(senders_)) {
      std::optional<T> v(std::move(*static_cast<T*>(s->data)));
      s->status = kDone;
      wake.add(detail::wake_target(*s));
      return v;
    }
    return std::nullopt;
  }

  void push_locked(T& value) noexcept {
    ring_[tail_].emplace(std::move(value));
    tail_ = tail_ + 1 == capacity_ ? 0 : tail_ + 1;
    ++count_;
  }

  std::optional<T> pop_locked() noexcept {
    std::optional<T>& cell = ring_[head_];
    std::optional<T> v(std::move(*cell));
    cell.reset();
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    --count_;
    return v;
  }

  Runtime* const rt_;
  // detail::binding_of(*rt_): what operations check the caller against, and what Lock tests
  // instead of rt_->controlled(), so that no check dereferences a runtime that may have ended.
  const std::uint64_t binding_;
  const std::uint64_t id_;
  const std::size_t capacity_;
  mutable detail::SpinLock lock_;
  std::unique_ptr<std::optional<T>[]> ring_;
  std::size_t head_ = 0;  // The oldest buffered value.
  std::size_t tail_ = 0;  // The next free slot.
  std::size_t count_ = 0;
  bool closed_ = false;
  detail::WaitQueue senders_;
  detail::WaitQueue receivers_;
};

}  // namespace bubble
