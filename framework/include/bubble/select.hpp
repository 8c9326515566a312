#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/select_claim.hpp>
#include <bubble/detail/select_engine.hpp>
#include <bubble/errc.hpp>
#include <bubble/result.hpp>
#include <bubble/source_location.hpp>

namespace bubble {

// bubble::select is Go's select statement: it waits until one of several channel operations (or
// a context's end) can proceed, performs exactly that one, and says which.
//
//   // Go: select { case tickets <- t: ...  case <-ctx.Done(): return ctx.Err() }
//   auto s = bubble::select(bubble::send(tickets, t), bubble::done(ctx));
//   if (s.index() == 1) return ctx.err();
//   if (s.get<0>()) ...;  // the send's error: errc::closed if `tickets` was closed
//
// The cases, written in the call in any order:
//   recv(ch)         receives a value from Channel<T> `ch` (a Timer's, a Ticker's or an After's
//                    channel too: `recv(after(1s).channel())` is Go's `<-time.After(1s)`).
//                    Proceeds when a value is buffered or offered by a waiting sender, or when
//                    the channel is closed; get<I>() is then a Result<T>: the value, or
//                    errc::closed once the channel is closed and drained.
//   send(ch, v)      sends v on `ch`. Proceeds when a receiver waits or a buffer slot is free, or
//                    when the channel is closed; get<I>() is then a std::error_code: {} once v is
//                    delivered, errc::closed if the channel is closed (v is dropped). (Go panics
//                    on a send to a closed channel; here it is an error code, as for
//                    Channel::send.) If the case does not proceed, v is destroyed unsent.
//   done(ctx)        proceeds once `ctx` is done (Go's `<-ctx.Done()`); get<I>() is ctx.err().
//   default_case()   at most one: if no other case can proceed at once, select returns it
//                    instead of blocking (get<I>() is not available for it).
// recv and send also take a Channel<T>* and done a const Context*: a null pointer makes an absent
// case that never proceeds (Go's nil channel), to switch a case off without changing the call.
//
// Which case proceeds:
// - When no case can proceed, select blocks until one can (without a default case) and then
//   performs it, atomically: exactly one case completes, and the others have no effect (an
//   unchosen send delivers nothing, an unchosen receive takes nothing). A select with only absent
//   cases and no default blocks forever (in a bubble: a deadlock, once nothing else can run).
// - When several can proceed at once, the choice among them is the runtime's
//   (Runtime::choose): in a bubble it is a scheduling decision with one candidate per ready case,
//   in argument order; fifo takes the first ready case, random and PCT draw it, and it is
//   recorded in the run's Schedule and replayed like any other decision. On the system runtime
//   it is uniform among the ready cases, like Go's.
// - While blocked, the select waits in each channel's queue like a plain send or receive would,
//   first-come first-served with the other waiters.
//
// Blocking: a select is one scheduling point in a bubble, then, if it must wait, a park: the
// thread counts as blocked (time advances, and a deadlock report lists the select and each case:
// its kind and the channel's object id). It never allocates (the bookkeeping is on the caller's
// stack; a done case registers a Context::Callback, which keeps its function in place).
// Thread safety and runtime: every channel must belong to the calling thread's runtime
// (otherwise std::logic_error, as for Channel's operations, before anything changes); the
// channels must outlive the call. The case objects are meant to be temporaries of the call.

// The cases, made by recv, send, done and default_case (see select); their fields are select's.
template <class T>
struct ReceiveCase {
  using result_type = Result<T>;
  Channel<T>* channel;
  SourceLocation where;
  std::optional<T> slot{};  // Where a waiting sender or a receive puts the value.
};

template <class T>
struct SendCase {
  using result_type = std::error_code;
  Channel<T>* channel;
  T value;
  SourceLocation where;
};

struct DoneCase {
  using result_type = std::error_code;
  const Context* context = nullptr;
  SourceLocation where;
};

struct DefaultCase {
  using result_type = std::monostate;
  SourceLocation where;
};

template <class T>
ReceiveCase<T> recv(Channel<T>& ch, SourceLocation where = SourceLocation::current()) noexcept {
  return ReceiveCase<T>{&ch, where};
}
template <class T>
ReceiveCase<T> recv(Channel<T>* ch, SourceLocation where = SourceLocation::current()) noexcept {
  return ReceiveCase<T>{ch, where};
}
template <class T>
SendCase<T> send(Channel<T>& ch, std::type_identity_t<T> value,
                 SourceLocation where = SourceLocation::current()) noexcept {
  return SendCase<T>{&ch, std::move(value), where};
}
template <class T>
SendCase<T> send(Channel<T>* ch, std::type_identity_t<T> value,
                 SourceLocation where = SourceLocation::current()) noexcept {
  return SendCase<T>{ch, std::move(value), where};
}
inline DoneCase done(const Context& ctx,
                     SourceLocation where = SourceLocation::current()) noexcept {
  return DoneCase{&ctx, where};
}
inline DoneCase done(const Context* ctx,
                     SourceLocation where = SourceLocation::current()) noexcept {
  return DoneCase{ctx, where};
}
inline DefaultCase default_case(SourceLocation where = SourceLocation::current()) noexcept {
  return DefaultCase{where};
}

// What select returns: which case proceeded, and its outcome.
template <class... Cases>
class Selected {
 public:
  // The argument index of the case that proceeded (the default case's, if it was taken).
  std::size_t index() const noexcept { return result_.index(); }

  // The outcome of case I, which must be the one that proceeded (index() == I; otherwise
  // std::logic_error): a Result<T> for a receive, a std::error_code for a send or a done case.
  template <std::size_t I>
  auto& get() {
    using Case = std::tuple_element_t<I, std::tuple<Cases...>>;
    static_assert(!std::is_same_v<Case, DefaultCase>,
                  "bubble::Selected::get: the default case has no outcome");
    if (result_.index() != I) bad_get(I);
    return std::get<I>(result_);
  }

  // Constructs the outcome of case I (used by select).
  template <std::size_t I, class... Args>
  explicit Selected(std::in_place_index_t<I> i, Args&&... args)
      : result_(i, std::forward<Args>(args)...) {}

 private:
  [[noreturn]] void bad_get(std::size_t i) const {
    throw std::logic_error("bubble::Selected::get<" + std::to_string(i) + ">: case " +
                           std::to_string(result_.index()) + " proceeded, not case " +
                           std::to_string(i));
  }
  std::variant<typename Cases::result_type...> result_;
};

namespace detail {

// select's access to a Channel<T> (a friend of Channel).
template <class T>
struct SelectChannel {
  static_assert(Channel<T>::kDone == kSelectDone && Channel<T>::kClosed == kSelectClosed);

  static Channel<T>& of(void* c) noexcept { return *static_cast<Channel<T>*>(c); }

  static void check(Channel<T>& c) { check_caller(c.binding_, c.rt_, "Channel", c.id_, "select"); }
  static void lock(void* c) noexcept {
    if (of(c).binding_ == 0) of(c).lock_.lock();
  }
  static void unlock(void* c) noexcept {
    if (of(c).binding_ == 0) of(c).lock_.unlock();
  }
  static bool ready(void* p, bool send) noexcept {
    Channel<T>& c = of(p);
    if (c.closed_) return true;
    if (send) return c.count_ < c.capacity_ || has_claimable(c.receivers_);
    return c.count_ > 0 || has_claimable(c.senders_);
  }
  static bool complete(void* p, bool send, Waiter& w, WakeList& wake) noexcept {
    Channel<T>& c = of(p);
    if (send) {
      if (c.closed_) {
        w.status = kSelectClosed;
        return true;
      }
      if (!c.offer_locked(*static_cast<T*>(w.data), wake)) return false;
      w.status = kSelectDone;
      return true;
    }
    if (std::optional<T> v = c.take_locked(wake)) {
      static_cast<std::optional<T>*>(w.data)->emplace(std::move(*v));
      w.status = kSelectDone;
      return true;
    }
    if (!c.closed_) return false;
    w.status = kSelectClosed;
    return true;
  }
  static void enqueue(void* p, bool send, Waiter& w) noexcept {
    (send ? of(p).senders_ : of(p).receivers_).push_back(w);
  }
  static void unlink(void* p, bool send, Waiter& w) noexcept {
    if (w.queued()) (send ? of(p).senders_ : of(p).receivers_).remove(w);
  }
  static constexpr SelectChannelOps kOps{&lock, &unlock, &ready, &complete, &enqueue, &unlink};
};

template <class Case>
inline constexpr bool kIsDefaultCase = std::is_same_v<Case, DefaultCase>;

// The outcome of case `c`, which proceeded (`sc` is its description).
template <class Case>
typename Case::result_type outcome(Case& c, const SelectCase& sc) {
  if constexpr (std::is_same_v<Case, DefaultCase>) {
    return std::monostate{};
  } else if constexpr (std::is_same_v<Case, DoneCase>) {
    return c.context->err();
  } else if constexpr (std::is_same_v<typename Case::result_type, std::error_code>) {
    return sc.waiter.status == kSelectDone ? std::error_code{} : make_error_code(errc::closed);
  } else {
    if (sc.waiter.status == kSelectDone) return std::move(*c.slot);
    return errc::closed;
  }
}

template <class Selected, std::size_t... I, class... Cases>
Selected make_selected(std::size_t chosen, const SelectCase* raw, std::index_sequence<I...>,
                       Cases&... cases) {
  std::optional<Selected> r;
  (void)((chosen == I ? (r.emplace(std::in_place_index<I>, outcome(cases, raw[I])), true)
                      : false) ||
         ...);
  return std::move(*r);
}

}  // namespace detail

// Waits for one of `cases` to proceed and performs it; see the comment at the top of this file.
// Returns which case proceeded and its outcome.
template <class... Cases>
Selected<std::decay_t<Cases>...> select(Cases&&... cases) {
  using Outcome = Selected<std::decay_t<Cases>...>;
  constexpr std::size_t kCases = sizeof...(Cases);
  static_assert(kCases > 0, "bubble::select: give at least one case");
  constexpr std::size_t kDefaults =
      (std::size_t{detail::kIsDefaultCase<std::decay_t<Cases>>} + ...);
  static_assert(kDefaults <= 1, "bubble::select: at most one default_case()");

  std::array<detail::SelectCase, kCases> raw;
  std::array<WaitInfo, kCases> parts;
  std::array<std::size_t, kCases> order{};
  std::size_t default_index = kCases;
  SourceLocation where;
  bool have_where = false;

  std::size_t i = 0;
  const auto describe = [&](auto& c) {
    using Case = std::decay_t<decltype(c)>;
    detail::SelectCase& sc = raw[i];
    WaitInfo& info = parts[i];
    info.where = c.where;
    if (!have_where) {
      where = c.where;
      have_where = true;
    }
    if constexpr (std::is_same_v<Case, DefaultCase>) {
      info.kind = "default";
      default_index = i;
    } else if constexpr (std::is_same_v<Case, DoneCase>) {
      if (c.context == nullptr) {
        info.kind = "absent context";
      } else {
        info.kind = "Context::done";
        sc.kind = detail::SelectCaseKind::done;
        sc.context = c.context;
      }
    } else {
      using T = typename Case::result_type;
      constexpr bool kSend = std::is_same_v<T, std::error_code>;
      if (c.channel == nullptr) {
        info.kind = kSend ? "Channel::send (absent channel)" : "Channel::receive (absent channel)";
      } else {
        using Ops = detail::SelectChannel<
            typename std::remove_reference_t<decltype(*c.channel)>::value_type>;
        Ops::check(*c.channel);
        info.kind = kSend ? "Channel::send" : "Channel::receive";
        info.object_id = c.channel->id();
        sc.kind = kSend ? detail::SelectCaseKind::send : detail::SelectCaseKind::receive;
        sc.ops = &Ops::kOps;
        sc.channel = c.channel;
        if constexpr (kSend) {
          sc.waiter.data = &c.value;
        } else {
          sc.waiter.data = &c.slot;
        }
      }
    }
    ++i;
  };
  (describe(cases), ...);

  const std::size_t chosen = detail::run_select(raw.data(), kCases, default_index != kCases,
                                                order.data(), parts.data(), where);
  return detail::make_selected<Outcome>(chosen == kCases ? default_index : chosen, raw.data(),
                                        std::index_sequence_for<Cases...>{}, cases...);
}

}  // namespace bubble
