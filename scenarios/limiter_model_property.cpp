// The model-based RateLimiter property of the limiter suite: RapidCheck stateful commands
// (rc::state) drive a RateLimiter feeding a pool in a bubble, and after every command the
// limiter's tokens and the fate of every submit equal those of a model.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "limiter_gen.hpp"
#include "limiter_properties.hpp"

namespace bubble::scenarios {
namespace {

using std::chrono::milliseconds;

// What a submit is doing, in the model: still waiting for a token, or returned with `result`.
struct SubmitFate {
  bool waiting = true;
  std::error_code result{};
};

// The model: the RateLimiter's contract on a pool whose jobs finish at once (so the pool never
// makes a submit wait for room). Waiting submits get tokens in the order they came (the bubble
// runs this property under fifo, where the limiter's condition variable wakes in FIFO order).
struct LimiterModel {
  int n = 1;
  std::int64_t interval_ms = 10;
  std::int64_t now_ms = 0;
  std::int64_t topped_up = 0;  // the interval whose top-up the tokens come from
  int tokens = 1;
  bool stopped = false;
  bool closed = false;
  std::vector<SubmitFate> submits;  // one per submit or try_submit command, in order
  std::deque<std::size_t> waiting;  // the waiting submits, oldest first

  // A call that has a token of the current interval: the pool accepts it, or refuses it because
  // it is closed (the token then goes back: same interval).
  std::error_code spend() {
    if (closed) return errc::closed;
    --tokens;
    return {};
  }
  // Waiting submits take the tokens there are, oldest first.
  void serve_waiting() {
    while (!waiting.empty() && tokens > 0) {
      submits[waiting.front()] = {false, spend()};
      waiting.pop_front();
    }
  }
  void advance_to(std::int64_t t_ms) {
    for (std::int64_t k = topped_up + 1; k * interval_ms <= t_ms; ++k) {
      now_ms = k * interval_ms;
      topped_up = k;
      if (stopped) continue;
      tokens = n;
      serve_waiting();
    }
    now_ms = t_ms;
  }
};

// The system under test, in the bubble.
struct LimiterSut {
  Runtime& rt;
  Pool& pool;
  RateLimiter& limiter;
  TimePoint start;
  struct Slot {
    std::optional<std::error_code> result;
    std::optional<std::pair<Context, CancelFunc>> ctx;
    std::optional<Thread> thread;
  };
  std::vector<std::unique_ptr<Slot>> submits;
  int ran = 0;
};

using Command = rc::state::Command<LimiterModel, LimiterSut>;

// The limiter the commands drive: n per interval.
struct ModelLimiter {
  int n = 1;
  int interval_ms = 10;
};

void showValue(const ModelLimiter& l, std::ostream& os) {
  os << "RateLimiter{n=" << l.n << ", interval=" << l.interval_ms << "ms}";
}

std::string result_text(const std::optional<std::error_code>& r) {
  if (!r) return "still waiting";
  return *r ? r->message() : std::string("accepted");
}

// After every command: the bubble has settled (every thread blocked); the limiter's tokens and
// every submit's fate are the model's.
void check_against(const LimiterModel& m, LimiterSut& sut, const std::string& after) {
  bubble::wait();
  BUBBLE_ASSERT((sut.rt.now() - sut.start) == Duration(milliseconds(m.now_ms)));
  if (sut.limiter.available() != m.tokens) {
    BUBBLE_FAIL("after " + after + ": the limiter has " + std::to_string(sut.limiter.available()) +
                " tokens, the model " + std::to_string(m.tokens));
  }
  for (std::size_t i = 0; i < m.submits.size(); ++i) {
    const std::optional<std::error_code> want =
        m.submits[i].waiting ? std::nullopt : std::optional<std::error_code>(m.submits[i].result);
    if (sut.submits[i]->result != want) {
      BUBBLE_FAIL("after " + after + ": submit " + std::to_string(i) + " is " +
                  result_text(sut.submits[i]->result) + ", the model says " + result_text(want));
    }
  }
}

struct Submit : Command {
  void apply(LimiterModel& m) const override {
    const std::size_t id = m.submits.size();
    m.submits.emplace_back();
    if (m.stopped) {
      m.submits[id] = {false, errc::limiter_stopped};
    } else if (m.tokens > 0) {
      m.submits[id] = {false, m.spend()};
    } else {
      m.waiting.push_back(id);
    }
  }
  void run(const LimiterModel& m, LimiterSut& sut) const override {
    auto slot = std::make_unique<LimiterSut::Slot>();
    slot->ctx.emplace(Context::with_cancel(Context::background()));
    LimiterSut::Slot* s = slot.get();
    sut.submits.push_back(std::move(slot));
    s->thread.emplace(
        "submit",
        [&sut, s] { s->result = sut.limiter.submit(s->ctx->first, [&sut] { ++sut.ran; }); },
        sut.rt);
    LimiterModel next = m;
    apply(next);
    check_against(next, sut, "submit " + std::to_string(m.submits.size()));
  }
  void show(std::ostream& os) const override { os << "submit"; }
};

struct TrySubmit : Command {
  void apply(LimiterModel& m) const override {
    const std::size_t id = m.submits.size();
    m.submits.emplace_back();
    if (m.stopped) {
      m.submits[id] = {false, errc::limiter_stopped};
    } else if (m.tokens == 0) {
      m.submits[id] = {false, errc::rate_limited};
    } else {
      m.submits[id] = {false, m.spend()};
    }
  }
  void run(const LimiterModel& m, LimiterSut& sut) const override {
    auto slot = std::make_unique<LimiterSut::Slot>();
    slot->result = sut.limiter.try_submit([&sut] { ++sut.ran; });
    sut.submits.push_back(std::move(slot));
    LimiterModel next = m;
    apply(next);
    check_against(next, sut, "try_submit " + std::to_string(m.submits.size()));
  }
  void show(std::ostream& os) const override { os << "try_submit"; }
};

struct Advance : Command {
  int by_ms = *grid_ms(40, 5);
  void apply(LimiterModel& m) const override { m.advance_to(m.now_ms + by_ms); }
  void run(const LimiterModel& m, LimiterSut& sut) const override {
    sut.rt.sleep_for(milliseconds(by_ms));
    LimiterModel next = m;
    apply(next);
    check_against(next, sut, "advance by " + std::to_string(by_ms) + "ms");
  }
  void show(std::ostream& os) const override { os << "advance{by=" << by_ms << "ms}"; }
};

struct Cancel : Command {
  int target = *rc::gen::inRange(0, 16);
  void checkPreconditions(const LimiterModel& m) const override { RC_PRE(!m.submits.empty()); }
  std::size_t which(const LimiterModel& m) const {
    return static_cast<std::size_t>(target) % m.submits.size();
  }
  void apply(LimiterModel& m) const override {
    const std::size_t id = which(m);
    for (auto it = m.waiting.begin(); it != m.waiting.end(); ++it) {
      if (*it == id) {
        m.waiting.erase(it);
        m.submits[id] = {false, errc::canceled};
        return;
      }
    }
  }
  void run(const LimiterModel& m, LimiterSut& sut) const override {
    auto& slot = *sut.submits[which(m)];
    if (slot.ctx) slot.ctx->second();
    LimiterModel next = m;
    apply(next);
    check_against(next, sut, "cancelling submit " + std::to_string(which(m)));
  }
  void show(std::ostream& os) const override { os << "cancel{submit=" << target << " mod count}"; }
};

struct Shutdown : Command {
  void apply(LimiterModel& m) const override { m.closed = true; }
  void run(const LimiterModel& m, LimiterSut& sut) const override {
    BUBBLE_ASSERT(!sut.pool.shutdown(Context::background()));
    LimiterModel next = m;
    apply(next);
    check_against(next, sut, "pool shutdown");
  }
  void show(std::ostream& os) const override { os << "shutdown_pool"; }
};

struct Stop : Command {
  void apply(LimiterModel& m) const override {
    m.stopped = true;
    for (const std::size_t id : m.waiting) m.submits[id] = {false, errc::limiter_stopped};
    m.waiting.clear();
  }
  void run(const LimiterModel& m, LimiterSut& sut) const override {
    sut.limiter.stop();
    LimiterModel next = m;
    apply(next);
    check_against(next, sut, "stop");
  }
  void show(std::ostream& os) const override { os << "stop"; }
};

}  // namespace

void rate_limiter_matches_its_model() {
  const ModelLimiter params = testing::draw(rc::gen::build<ModelLimiter>(
      rc::gen::set(&ModelLimiter::n, rc::gen::inRange(1, 4)),
      rc::gen::set(&ModelLimiter::interval_ms, rc::gen::element(10, 20, 25))));
  const int n = params.n;
  const int interval_ms = params.interval_ms;
  testing::run_property(
      {.max_steps = kCaseSteps, .max_virtual_time = kCaseVirtualTime}, [&](Runtime& rt) {
        PoolOptions options;
        options.workers = 1;
        options.queue_capacity = 1024;
        Pool pool(options, rt);
        RateLimiter limiter(pool, n, milliseconds(interval_ms));
        LimiterSut sut{rt, pool, limiter, rt.now(), {}, 0};
        LimiterModel initial;
        initial.n = n;
        initial.interval_ms = interval_ms;
        initial.tokens = n;
        const auto commands = testing::draw(rc::state::gen::commands(
            initial, rc::state::gen::execOneOfWithArgs<Submit, Submit, TrySubmit, Advance, Advance,
                                                       Cancel, Shutdown, Stop>()));
        rc::state::runAll(commands, initial, sut);
        limiter.stop();
        (void)pool.shutdown(Context::background());
        for (auto& slot : sut.submits) {
          if (slot->thread) slot->thread->join();
        }
        int accepted = 0;
        for (auto& slot : sut.submits) accepted += (slot->result && !*slot->result) ? 1 : 0;
        BUBBLE_ASSERT(sut.ran == accepted);
      });
}

}  // namespace bubble::scenarios
