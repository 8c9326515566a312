// The TokenBucket property of the limiter suite: every decision of a TokenBucket, driven through
// allow, reserve, cancel and wait in a bubble, agrees with a pure model of
// golang.org/x/time/rate's Limiter, and the grants never exceed burst + rate * t.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "limiter_gen.hpp"
#include "limiter_properties.hpp"

namespace bubble::scenarios {
namespace {

// golang.org/x/time/rate's Limiter, written from rate.go (advance, reserveN, CancelAt,
// durationFromTokens, tokensFromDuration) with nanosecond times, for finite rates > 0. It is
// the model the bucket must agree with, decision by decision.
class GoLimiterModel {
 public:
  struct Reservation {
    bool ok = false;
    int tokens = 0;
    std::int64_t time_to_act = 0;
    double limit = 0;
  };

  GoLimiterModel(double limit, int burst) : limit_(limit), burst_(burst), tokens_(burst) {}

  double tokens_at(std::int64_t t) const { return advance(t); }

  // reserveN(t, n, maxFutureReserve).
  Reservation reserve(std::int64_t t, int n, std::int64_t max_wait) {
    double tokens = advance(t) - n;
    std::int64_t wait = 0;
    if (tokens < 0) wait = duration_from_tokens(-tokens);
    Reservation r;
    r.ok = n <= burst_ && wait <= max_wait;
    r.limit = limit_;
    if (r.ok) {
      r.tokens = n;
      r.time_to_act = t + wait;
      last_ = t;
      tokens_ = tokens;
      last_event_ = r.time_to_act;
    }
    return r;
  }

  // Reservation.CancelAt(t).
  void cancel(const Reservation& r, std::int64_t t) {
    if (!r.ok || r.tokens == 0 || r.time_to_act < t) return;
    const double restore = r.tokens - seconds(last_event_ - r.time_to_act) * r.limit;
    if (restore <= 0) return;
    double tokens = advance(t) + restore;
    if (tokens > burst_) tokens = burst_;
    last_ = t;
    tokens_ = tokens;
    if (r.time_to_act == last_event_) {
      const std::int64_t previous = r.time_to_act + duration_from_tokens(-double(r.tokens));
      if (previous >= t) last_event_ = previous;
    }
  }

  // time.Duration(tokens / limit * 1e9): Go converts a float64 to an integer by truncation.
  std::int64_t duration_from_tokens(double tokens) const {
    return static_cast<std::int64_t>((tokens / limit_) * 1e9);
  }

 private:
  // Go's Duration.Seconds(): whole seconds and the remainder converted separately.
  static double seconds(std::int64_t ns) {
    return double(ns / 1'000'000'000) +  // NOLINT(bugprone-integer-division): whole seconds
           double(ns % 1'000'000'000) / 1e9;
  }
  double advance(std::int64_t t) const {
    std::int64_t last = last_;
    if (t < last) last = t;
    double tokens = tokens_ + seconds(t - last) * limit_;
    if (tokens > burst_) tokens = burst_;
    return tokens;
  }

  double limit_;
  int burst_;
  double tokens_;
  std::int64_t last_ = std::numeric_limits<std::int64_t>::min() / 2;
  std::int64_t last_event_ = std::numeric_limits<std::int64_t>::min() / 2;
};

// One request of the workload, made `gap_ns` after the previous one.
struct BucketOp {
  enum Kind { allow, reserve, cancel, wait } kind = allow;
  std::int64_t gap_ns = 0;
  int n = 1;
  int target = 0;               // cancel: which reservation (modulo the ones made so far)
  std::int64_t limit_ns = -1;   // wait: the context's deadline after the call (-1: none)
  std::int64_t cancel_ns = -1;  // wait: the context is cancelled this long after the call
};

struct BucketWorkload {
  double rate = 1;
  int burst = 1;
  std::vector<BucketOp> ops;
};

// Whole milliseconds as "150ms", anything finer exactly, as "142857142ns".
std::string ns_text(std::int64_t ns) {
  if (ns % 1'000'000 == 0) return format_duration(Duration(ns));
  return std::to_string(ns) + "ns";
}

void showValue(const BucketOp& op, std::ostream& os) {
  static const char* const kNames[] = {"allow", "reserve", "cancel", "wait"};
  os << kNames[op.kind] << "{gap=" << ns_text(op.gap_ns);
  if (op.kind == BucketOp::cancel) {
    os << ", reservation=" << op.target;
  } else {
    os << ", n=" << op.n;
  }
  if (op.kind == BucketOp::wait) {
    os << ", deadline=" << (op.limit_ns < 0 ? std::string("none") : ns_text(op.limit_ns))
       << ", cancel_after=" << (op.cancel_ns < 0 ? std::string("never") : ns_text(op.cancel_ns));
  }
  os << "}";
}

void showValue(const BucketWorkload& w, std::ostream& os) {
  os << "BucketWorkload{rate=" << w.rate << "/s, burst=" << w.burst << ", ops=[";
  for (std::size_t i = 0; i < w.ops.size(); ++i) {
    os << (i == 0 ? "" : ", ");
    showValue(w.ops[i], os);
  }
  os << "]}";
}

// Gaps of whole and fractional token periods, nanosecond odds and ends, and plain randomness.
rc::Gen<std::int64_t> gap_gen() {
  return rc::gen::oneOf(rc::gen::element<std::int64_t>(0, 1, 333'333'333, 333'333'334, 1'000'000,
                                                       142'857'142, 50'000'000),
                        rc::gen::inRange<std::int64_t>(0, 700'000'000));
}

rc::Gen<BucketWorkload> bucket_workload() {
  return rc::gen::resize(
      100, rc::gen::exec([] {
        BucketWorkload w;
        // Rates whose token period is not a whole number of nanoseconds (3/s, 7/s, 0.3/s ...) and
        // plain ones.
        w.rate =
            *rc::gen::oneOf(rc::gen::element(3.0, 7.0, 0.3, 1.5, 13.0, 333.0, 6.0),
                            rc::gen::map(rc::gen::inRange(1, 60), [](int r) { return double(r); }));
        w.burst = *rc::gen::inRange(1, 6);
        const int burst = w.burst;
        w.ops = *list_of(
            30, rc::gen::exec([burst] {
              BucketOp op;
              op.kind = *rc::gen::element(BucketOp::allow, BucketOp::allow, BucketOp::reserve,
                                          BucketOp::cancel, BucketOp::wait);
              op.gap_ns = *gap_gen();
              op.n = *rc::gen::inRange(0, burst + 2);
              op.target = *rc::gen::inRange(0, 8);
              op.limit_ns = *rc::gen::oneOf(rc::gen::just<std::int64_t>(-1),
                                            rc::gen::inRange<std::int64_t>(1, 1'000'000'000));
              op.cancel_ns = *rc::gen::oneOf(rc::gen::just<std::int64_t>(-1),
                                             rc::gen::inRange<std::int64_t>(0, 1'000'000'000));
              return op;
            }));
        return w;
      }));
}

// What the bucket answered to op i, next to what the model says.
std::string mismatch(std::size_t i, const BucketOp& op, std::int64_t t, const std::string& got,
                     const std::string& want) {
  std::ostringstream os;
  os << "op " << i << " ";
  showValue(op, os);
  os << " at " << ns_text(t) << ": the bucket " << got << ", golang.org/x/time/rate " << want;
  return os.str();
}

}  // namespace

void token_bucket_agrees_with_go() {
  const BucketWorkload w = testing::draw(bucket_workload());
  const Schedule schedule = testing::draw(bubble::gen::schedule());
  testing::run_property(
      {.strategy = schedule.to_strategy(), .max_steps = kCaseSteps}, [&](Runtime& rt) {
        TokenBucket bucket(w.rate, w.burst, rt);
        GoLimiterModel model(w.rate, w.burst);
        const TimePoint start = rt.now();
        auto now_ns = [&] { return (rt.now() - start).count(); };
        std::vector<TokenBucket::Reservation> reservations;
        std::vector<GoLimiterModel::Reservation> modelled;
        std::vector<bool> cancelled;
        std::multimap<std::int64_t, int> grants;  // when usable -> tokens (cancelled ones removed)
        std::map<std::size_t, std::multimap<std::int64_t, int>::iterator> grant_of;
        for (std::size_t i = 0; i < w.ops.size(); ++i) {
          const BucketOp& op = w.ops[i];
          rt.sleep_for(Duration(op.gap_ns));
          const std::int64_t t = now_ns();
          switch (op.kind) {
            case BucketOp::allow: {
              const bool want = model.reserve(t, op.n, 0).ok;
              const bool got = bucket.allow(op.n);
              if (got != want) {
                BUBBLE_FAIL(mismatch(i, op, t, got ? "allowed" : "refused",
                                     want ? "allows (it has the tokens)" : "refuses"));
              }
              if (got) grants.emplace(t, op.n);
              break;
            }
            case BucketOp::reserve: {
              const auto want = model.reserve(t, op.n, std::numeric_limits<std::int64_t>::max());
              TokenBucket::Reservation got = bucket.reserve(op.n);
              const std::int64_t got_delay = got.ok() ? got.delay().count() : -1;
              const std::int64_t want_delay = want.ok ? want.time_to_act - t : -1;
              if (got.ok() != want.ok || got_delay != want_delay) {
                BUBBLE_FAIL(mismatch(
                    i, op, t, got.ok() ? "granted with delay " + ns_text(got_delay) : "refused",
                    want.ok ? "grants with delay " + ns_text(want_delay) : "refuses"));
              }
              if (got.ok()) grant_of[reservations.size()] = grants.emplace(want.time_to_act, op.n);
              reservations.push_back(std::move(got));
              modelled.push_back(want);
              cancelled.push_back(false);
              break;
            }
            case BucketOp::cancel: {
              if (reservations.empty()) break;
              const std::size_t r = static_cast<std::size_t>(op.target) % reservations.size();
              if (!cancelled[r]) model.cancel(modelled[r], t);
              reservations[r].cancel();
              // A reservation still in the future gives its tokens back (as far as it can): it no
              // longer counts as a grant. One already due keeps counting.
              if (!cancelled[r] && modelled[r].ok && modelled[r].time_to_act >= t &&
                  grant_of.count(r)) {
                grants.erase(grant_of[r]);
              }
              cancelled[r] = true;
              break;
            }
            case BucketOp::wait: {
              // WaitN: the burst check, then the deadline check, then the wait.
              std::error_code want_ec;
              std::int64_t want_return = t;
              std::optional<GoLimiterModel::Reservation> held;
              if (op.n > w.burst) {
                want_ec = errc::exceeds_burst;
              } else {
                const std::int64_t max_wait =
                    op.limit_ns < 0 ? std::numeric_limits<std::int64_t>::max() : op.limit_ns;
                if (op.cancel_ns == 0) {
                  want_ec = errc::canceled;  // the context is done before the call
                } else {
                  const auto r = model.reserve(t, op.n, max_wait);
                  if (!r.ok) {
                    want_ec = errc::would_exceed_deadline;
                  } else if (op.cancel_ns > 0 && op.cancel_ns < r.time_to_act - t) {
                    want_ec = errc::canceled;  // the tokens win a tie
                    want_return = t + op.cancel_ns;
                    model.cancel(r, want_return);
                  } else {
                    want_return = r.time_to_act;
                    held = r;
                  }
                }
              }
              Context ctx = Context::background();
              std::optional<std::pair<Context, CancelFunc>> timeout;
              std::optional<std::pair<Context, CancelFunc>> cancellable;
              if (op.limit_ns >= 0) {
                timeout.emplace(Context::with_timeout(ctx, Duration(op.limit_ns), rt));
                ctx = timeout->first;
              }
              std::optional<Thread> canceller;
              if (op.cancel_ns >= 0) {
                cancellable.emplace(Context::with_cancel(ctx));
                ctx = cancellable->first;
                if (op.cancel_ns == 0) {
                  cancellable->second();
                } else {
                  canceller.emplace(
                      "canceller",
                      [&rt, &cancellable, d = op.cancel_ns] {
                        rt.sleep_for(Duration(d));
                        cancellable->second();
                      },
                      rt);
                }
              }
              const std::error_code got_ec = bucket.wait(ctx, op.n);
              const std::int64_t got_return = now_ns();
              if (got_ec != want_ec || got_return != want_return) {
                BUBBLE_FAIL(mismatch(i, op, t,
                                     "returned " + (got_ec ? got_ec.message() : std::string("ok")) +
                                         " at " + ns_text(got_return),
                                     "returns " +
                                         (want_ec ? want_ec.message() : std::string("ok")) +
                                         " at " + ns_text(want_return)));
              }
              if (held) grants.emplace(held->time_to_act, op.n);
              if (canceller) {
                cancellable->second();
                canceller->join();
              }
              if (timeout) timeout->second();
              break;
            }
          }
        }
        // The conformance bound, independent of the model: the tokens usable by time t never exceed
        // burst + rate * t (the bucket starts full).
        double used = 0;
        for (const auto& [when, tokens] : grants) {
          used += tokens;
          const double bound = w.burst + w.rate * (double(when) / 1e9);
          if (used > bound + 1e-6) {
            BUBBLE_FAIL("the bucket granted " + std::to_string(used) + " tokens usable by " +
                        ns_text(when) + ", more than burst + rate * t = " + std::to_string(bound));
          }
        }
      });
}

}  // namespace bubble::scenarios
