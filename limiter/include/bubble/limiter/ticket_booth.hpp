#pragma once

#include <atomic>
#include <cstdint>
#include <system_error>

#include <bubble/atomic.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/thread.hpp>
#include <bubble/time.hpp>

namespace bubble {

// TicketBooth issues one ticket every window / n, the interval measured from the moment the
// previous ticket was taken: a thread plays the booth, hands each ticket to one
// taker over an unbuffered channel, and only then re-arms a Timer for the next one.
//
// So, however slow the takers, two tickets never come out less than an interval apart, and there
// are no saved-up tickets after idleness: a booth left alone for ten seconds has one ticket
// waiting, not a hundred (unlike a token bucket, it allows no bursts). The first ticket is
// available at once. A booth written with a Ticker instead would, after a stall, hand out a stale
// tick's ticket right after the stalled one (the counter-example in ticket_booth_test.cpp).
//
// Takers are served first come, first served. The booth stops when its context ends or stop() is
// called; takers, waiting or later, then get errc::limiter_stopped.
//
// Thread safety: take() may be called concurrently from threads of the booth's runtime; stop()
// too. The destructor stops the booth and must not run concurrently with other members.
class TicketBooth {
 public:
  // Starts the booth's thread on `rt`. It stops when `ctx` ends (or at stop()). Throws
  // std::invalid_argument naming the value if window <= 0, n < 1, or window / n is less than
  // one nanosecond.
  TicketBooth(Duration window, int n, const Context& ctx = Context::background(),
              Runtime& rt = current_runtime());
  // TicketBooth(window, n, Context::background(), rt): a booth that runs until stop().
  TicketBooth(Duration window, int n, Runtime& rt);
  // stop().
  ~TicketBooth();
  TicketBooth(const TicketBooth&) = delete;
  TicketBooth& operator=(const TicketBooth&) = delete;

  // Blocks until the calling thread gets a ticket (returns {}), `ctx` ends (returns ctx.err(),
  // at once if it is already done; no ticket is taken), or the booth stops (returns
  // errc::limiter_stopped).
  [[nodiscard]] std::error_code take(const Context& ctx,
                                     SourceLocation where = SourceLocation::current());

  // Stops the booth: takers get errc::limiter_stopped. Idempotent; the first call waits for the
  // booth's thread to exit.
  void stop(SourceLocation where = SourceLocation::current());

  // window / n: the least time between two tickets.
  Duration interval() const noexcept { return interval_; }
  // The number of tickets taken so far. A snapshot; a scheduling point in a bubble.
  std::uint64_t taken() const noexcept { return taken_.load(std::memory_order_relaxed); }

 private:
  void run();

  Runtime* rt_;
  const Duration interval_;
  Channel<std::uint64_t> tickets_;  // Unbuffered: a ticket is handed to one taker.
  Context ctx_;                     // Child of the constructor's ctx; ended by stop().
  CancelFunc cancel_;
  Atomic<std::uint64_t> taken_;
  Atomic<bool> stopping_;  // Set by the first stop(), which joins thread_.
  Thread thread_;
};

}  // namespace bubble
