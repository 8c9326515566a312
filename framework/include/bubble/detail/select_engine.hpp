#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <bubble/context.hpp>
#include <bubble/detail/wake_list.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>

namespace bubble::detail {

// The part of bubble::select that does not depend on the cases' value types
// (primitives/select.cpp). The template in select.hpp describes each case with a SelectCase on its
// own stack and calls run_select; nothing here allocates.

// What run_select needs from a channel, per element type (SelectChannel<T> in select.hpp). Every
// function but lock and unlock is called with the channel locked.
struct SelectChannelOps {
  void (*lock)(void* channel) noexcept;
  void (*unlock)(void* channel) noexcept;
  // True if the case can complete now (a receive: a value is buffered or offered by a waiting
  // sender, or the channel is closed; a send: a receiver waits or a slot is free, or the channel
  // is closed).
  bool (*ready)(void* channel, bool send) noexcept;
  // Completes the case if it can complete now, setting `waiter.status` (kSelectDone or
  // kSelectClosed) and, for a receive, the slot `waiter.data` points at; false if it cannot.
  bool (*complete)(void* channel, bool send, Waiter& waiter, WakeList& wake) noexcept;
  // Queues `waiter` on the channel's receivers (send: senders).
  void (*enqueue)(void* channel, bool send, Waiter& waiter) noexcept;
  // Removes `waiter` from the channel's queue if it is still queued.
  void (*unlink)(void* channel, bool send, Waiter& waiter) noexcept;
};

// Waiter::status of a completed channel case (the values Channel uses).
inline constexpr int kSelectDone = 1;
inline constexpr int kSelectClosed = 2;

enum class SelectCaseKind : std::uint8_t { absent, receive, send, done };

// One case of one select call.
struct SelectCase {
  SelectCaseKind kind = SelectCaseKind::absent;
  const SelectChannelOps* ops = nullptr;  // receive and send
  void* channel = nullptr;                // receive and send: the Channel<T>
  const Context* context = nullptr;       // done
  // receive and send: what is queued on the channel; data points at the receive's slot
  // (std::optional<T>) or at the value to send, status is the outcome.
  Waiter waiter;
  // done: the registration on the context while the select waits.
  std::optional<Context::Callback> on_done;
};

// Runs a select over `n` cases (`parts`: their WaitInfos, for reports; `order`: room for n
// indices). Returns the index of the case that completed, or n for the default case (only when
// `has_default` and no case could complete at once). See bubble::select for the contract.
std::size_t run_select(SelectCase* cases, std::size_t n, bool has_default, std::size_t* order,
                       const WaitInfo* parts, SourceLocation where);

}  // namespace bubble::detail
