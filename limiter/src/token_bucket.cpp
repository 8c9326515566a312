#include <bubble/limiter/token_bucket.hpp>

#include <optional>

namespace bubble {
namespace {

// Locks a Mutex for a scope, passing the caller's source location to lock and unlock.
class Guard {
 public:
  Guard(Mutex& mu, SourceLocation where) : mu_(mu), where_(where) { mu_.lock(where_); }
  ~Guard() { mu_.unlock(where_); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  Mutex& mu_;
  SourceLocation where_;
};

}  // namespace

TokenBucket::TokenBucket(double rate_per_second, int burst, Runtime& rt)
    : rt_(&rt),
      id_(rt.new_object_id("token_bucket")),
      mu_("token_bucket.lock", rt),
      core_(rate_per_second, burst) {}

bool TokenBucket::allow(int n, SourceLocation where) {
  const TimePoint now = rt_->now();  // As upstream: read before locking.
  Guard g(mu_, where);
  return core_.allow_at(now, n);
}

bool TokenBucket::allow_at(TimePoint t, int n, SourceLocation where) {
  Guard g(mu_, where);
  return core_.allow_at(t, n);
}

TokenBucket::Reservation TokenBucket::reserve(int n, SourceLocation where) {
  const TimePoint now = rt_->now();  // As upstream: read before locking.
  Guard g(mu_, where);
  return Reservation(this, core_.reserve_at(now, n));
}

TokenBucket::Reservation TokenBucket::reserve_at(TimePoint t, int n, Duration max_wait,
                                                 SourceLocation where) {
  Guard g(mu_, where);
  return Reservation(this, core_.reserve_at(t, n, max_wait));
}

std::error_code TokenBucket::wait(const Context& ctx, int n, SourceLocation where) {
  TokenReservation r;
  TimePoint now;
  {
    Guard g(mu_, where);
    if (auto ec = core_.check_wait(n)) return ec;
    if (ctx.done()) return ctx.err();
    now = rt_->now();
    const TimePoint deadline = ctx.deadline().value_or(kNoDeadline);
    if (auto ec = core_.reserve_for_wait_at(now, n, deadline, r)) return ec;
  }
  if (r.delay_from(now) == Duration::zero()) return {};
  {
    // A child of ctx that also ends when the tokens fall due: wait for whichever comes first.
    auto [due, stop] = Context::with_deadline(ctx, r.time_to_act, *rt_);
    due.wait(where);
    stop();
  }
  now = rt_->now();
  if (now >= r.time_to_act) return {};
  // ctx ended first: give the tokens back, as far as later reservations allow.
  Guard g(mu_, where);
  core_.cancel_at(r, now);
  return ctx.err();
}

void TokenBucket::set_rate(double rate_per_second, SourceLocation where) {
  const TimePoint now = rt_->now();  // As upstream: read before locking.
  Guard g(mu_, where);
  core_.set_rate_at(now, rate_per_second);
}

void TokenBucket::set_rate_at(TimePoint t, double rate_per_second, SourceLocation where) {
  Guard g(mu_, where);
  core_.set_rate_at(t, rate_per_second);
}

void TokenBucket::set_burst(int burst, SourceLocation where) {
  const TimePoint now = rt_->now();  // As upstream: read before locking.
  Guard g(mu_, where);
  core_.set_burst_at(now, burst);
}

void TokenBucket::set_burst_at(TimePoint t, int burst, SourceLocation where) {
  Guard g(mu_, where);
  core_.set_burst_at(t, burst);
}

double TokenBucket::rate(SourceLocation where) const {
  Guard g(mu_, where);
  return core_.rate();
}

int TokenBucket::burst(SourceLocation where) const {
  Guard g(mu_, where);
  return core_.burst();
}

double TokenBucket::tokens(SourceLocation where) const {
  const TimePoint now = rt_->now();  // As upstream: read before locking.
  Guard g(mu_, where);
  return core_.tokens_at(now);
}

double TokenBucket::tokens_at(TimePoint t, SourceLocation where) const {
  Guard g(mu_, where);
  return core_.tokens_at(t);
}

void TokenBucket::cancel_at(const TokenReservation& r, TimePoint t, SourceLocation where) {
  Guard g(mu_, where);
  core_.cancel_at(r, t);
}

Duration TokenBucket::Reservation::delay() const noexcept {
  if (bucket_ == nullptr) return kInfiniteDuration;
  return value_.delay_from(bucket_->rt_->now());
}

void TokenBucket::Reservation::cancel(SourceLocation where) {
  if (bucket_ == nullptr) return;
  cancel_at(bucket_->rt_->now(), where);
}

void TokenBucket::Reservation::cancel_at(TimePoint t, SourceLocation where) {
  if (bucket_ == nullptr || !value_.ok || cancelled_) return;
  cancelled_ = true;
  bucket_->cancel_at(value_, t, where);
}

}  // namespace bubble
