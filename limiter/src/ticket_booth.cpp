#include <bubble/limiter/ticket_booth.hpp>

#include <bubble/timer.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace bubble {
namespace {

Duration checked_interval(Duration window, int n) {
  if (window <= Duration::zero()) {
    throw std::invalid_argument("bubble::TicketBooth: window must be > 0, got " +
                                format_duration(window));
  }
  if (n < 1) {
    throw std::invalid_argument("bubble::TicketBooth: n must be >= 1, got " + std::to_string(n));
  }
  const Duration interval = window / n;
  if (interval <= Duration::zero()) {
    throw std::invalid_argument("bubble::TicketBooth: window / n must be at least 1ns, got " +
                                format_duration(window) + " / " + std::to_string(n));
  }
  return interval;
}

}  // namespace

TicketBooth::TicketBooth(Duration window, int n, const Context& ctx, Runtime& rt)
    : rt_(&rt),
      interval_(checked_interval(window, n)),
      tickets_("ticket_booth.tickets", 0, rt),
      taken_("ticket_booth.taken", 0),
      stopping_("ticket_booth.stopping", false) {
  auto [child, cancel] = Context::with_cancel(ctx);
  ctx_ = std::move(child);
  cancel_ = std::move(cancel);
  thread_ = Thread(
      "ticket_booth", [this] { run(); }, rt);
}

TicketBooth::TicketBooth(Duration window, int n, Runtime& rt)
    : TicketBooth(window, n, Context::background(), rt) {}

TicketBooth::~TicketBooth() {
  stop();
}

void TicketBooth::run() {
  Timer pause("ticket_booth.pause", interval_, *rt_);
  for (std::uint64_t i = 0;; ++i) {
    // Hand the ticket to one taker (unbuffered: the send completes when it is taken).
    if (tickets_.send(i, ctx_)) break;
    // The interval counts from the delivery. Reset discards the value of the first arming (or
    // any stale one), as Go 1.23's Timer.Reset does.
    pause.reset(interval_);
    if (!pause.channel().receive(ctx_)) break;
  }
  tickets_.close();
}

std::error_code TicketBooth::take(const Context& ctx, SourceLocation where) {
  Result<std::uint64_t> ticket = tickets_.receive(ctx, where);
  if (ticket) {
    taken_.fetch_add(1, std::memory_order_relaxed, where);
    return {};
  }
  if (ticket.error() == errc::closed) return errc::limiter_stopped;
  return ticket.error();
}

void TicketBooth::stop(SourceLocation where) {
  cancel_();
  // Only the first call joins (Thread is not thread-safe); later calls find the booth stopping.
  if (!stopping_.exchange(true, std::memory_order_acq_rel, where)) thread_.join(where);
}

}  // namespace bubble
