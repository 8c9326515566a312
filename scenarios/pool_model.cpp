#include <bubble/bubble.hpp>
#include <bubble/errc.hpp>
#include <bubble/scenarios/pool_model.hpp>
#include <bubble/scenarios/show.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

constexpr int kContexts = 2;

enum class ModelState { queued, running, done, canceled };

struct ModelJob {
  Duration work{};
  int context = -1;  // -1: background
  ModelState state = ModelState::queued;
  Duration ends{};  // while running
};

// The pure model: time is a Duration since the start; jobs are FIFO (one tenant, one priority).
struct PoolModel {
  int workers = 1;
  std::size_t capacity = 1;
  // Free slots a full queue needs before the waiting submitter resumes (PoolOptions::
  // room_to_resume, resolved: 0 means a quarter of the capacity, at least 1).
  std::size_t room_to_resume = 1;
  Duration now{};
  Duration timeout_offset{};  // grows by 1us with every timeout drawn (see pool_model.hpp)
  std::vector<ModelJob> jobs;
  std::deque<std::size_t> queue;
  std::vector<std::size_t> running;
  bool cancelled[kContexts] = {false, false};
  bool closed = false;
  bool pool_cancelled = false;
  bool stopped = false;

  bool ctx_done(int c) const { return pool_cancelled || (c >= 0 && cancelled[c]); }

  // Free workers take queued jobs at `now`; a job whose context is done returns at once.
  void take() {
    while (static_cast<int>(running.size()) < workers && !queue.empty()) {
      const std::size_t id = queue.front();
      queue.pop_front();
      ModelJob& j = jobs[id];
      if (ctx_done(j.context)) {
        j.state = ModelState::canceled;
        continue;
      }
      if (j.work == Duration::zero()) {
        j.state = ModelState::done;
        continue;
      }
      j.state = ModelState::running;
      j.ends = now + j.work;
      running.push_back(id);
    }
    if (closed && queue.empty() && running.empty()) stopped = true;
  }

  // The next instant a running job ends, if any.
  std::optional<Duration> next_end() const {
    std::optional<Duration> t;
    for (std::size_t id : running) {
      if (!t || jobs[id].ends < *t) t = jobs[id].ends;
    }
    return t;
  }

  // Ends the jobs due at `now`, then lets workers take more.
  void finish_due() {
    std::vector<std::size_t> still;
    for (std::size_t id : running) {
      if (jobs[id].ends <= now) {
        jobs[id].state = ModelState::done;
      } else {
        still.push_back(id);
      }
    }
    running = std::move(still);
    take();
  }

  // Moves time to `to`, event by event; `until` may stop early: it returns true at an instant
  // where the caller's condition holds (after that instant's jobs ended and were replaced).
  template <class Until>
  bool advance(Duration to, Until until) {
    take();
    if (until()) return true;
    for (;;) {
      const std::optional<Duration> t = next_end();
      if (!t || *t > to) break;
      now = *t;
      finish_due();
      if (until()) return true;
    }
    now = to;
    return false;
  }
  void advance(Duration to) {
    advance(to, [] { return false; });
  }

  void cancel(int c) {
    if (cancelled[c]) return;
    cancelled[c] = true;
    std::vector<std::size_t> still;
    for (std::size_t id : running) {
      if (jobs[id].context == c) {
        jobs[id].state = ModelState::canceled;
      } else {
        still.push_back(id);
      }
    }
    running = std::move(still);
    take();
  }

  void cancel_pool() {
    pool_cancelled = true;
    for (std::size_t id : running) jobs[id].state = ModelState::canceled;
    running.clear();
    take();
  }

  Duration draw_timeout(int ms) {
    timeout_offset += 1us;
    return std::chrono::milliseconds(ms) + timeout_offset;
  }
};

// The system under test: the pool, its runtime, the contexts and what each job reported.
struct PoolSut {
  Runtime& rt;
  TimePoint start;
  std::vector<std::pair<Context, CancelFunc>> contexts;
  std::vector<std::optional<JobStatus>> outcomes;  // one per job the model knows
  std::vector<int> reports;
  // Last, so that it is destroyed first: its destructor still reports outcomes into the vectors
  // above (a failed check leaves the SUT by an exception, with jobs queued).
  std::unique_ptr<PoolUnderTest> pool;
};

using PoolCommand = rc::state::Command<PoolModel, PoolSut>;

ModelState model_state(JobStatus s) {
  return s == JobStatus::done ? ModelState::done : ModelState::canceled;
}

const char* to_string(ModelState s) {
  switch (s) {
    case ModelState::queued:
      return "queued";
    case ModelState::running:
      return "running";
    case ModelState::done:
      return "done";
    case ModelState::canceled:
      return "canceled";
  }
  return "?";
}

// After every command: the pool and the model agree on time, queue, workers and every outcome.
void check_agreement(const PoolModel& m, PoolSut& sut) {
  BUBBLE_ASSERT(sut.rt.now() - sut.start == m.now);
  const PoolStats st = sut.pool->stats();
  BUBBLE_ASSERT(st.queue_depth == m.queue.size());
  BUBBLE_ASSERT(st.busy_workers == static_cast<int>(m.running.size()));
  for (std::size_t id = 0; id < m.jobs.size(); ++id) {
    const ModelState expected = m.jobs[id].state;
    const bool ended = expected == ModelState::done || expected == ModelState::canceled;
    if (!ended) {
      BUBBLE_ASSERT(!sut.outcomes[id].has_value());
      continue;
    }
    if (!sut.outcomes[id])
      BUBBLE_FAIL("job " + std::to_string(id) + " should have ended " + to_string(expected));
    BUBBLE_ASSERT(sut.reports[id] == 1);
    if (model_state(*sut.outcomes[id]) != expected) {
      BUBBLE_FAIL("job " + std::to_string(id) + " ended " + to_string(*sut.outcomes[id]) +
                  ", the model says " + to_string(expected));
    }
  }
}

struct Submit : PoolCommand {
  SubmitKind kind =
      *rc::gen::element(SubmitKind::submit, SubmitKind::try_submit, SubmitKind::submit_within);
  int context = *rc::gen::inRange(-1, kContexts);
  int work_ms = *rc::gen::inRange(0, 31);
  int max_wait_ms = *rc::gen::inRange(0, 31);

  // What the pool should return, applied to `m`.
  std::error_code expect(PoolModel& m) const {
    if (context >= 0 && m.cancelled[context]) return make_error_code(errc::canceled);
    if (m.closed) return make_error_code(errc::closed);
    auto accept = [&] {
      m.jobs.push_back({std::chrono::milliseconds(work_ms), context, ModelState::queued, {}});
      m.queue.push_back(m.jobs.size() - 1);
      m.take();
      return std::error_code{};
    };
    if (m.queue.size() < m.capacity) return accept();
    if (kind == SubmitKind::try_submit) return make_error_code(errc::full);
    const bool bounded = kind == SubmitKind::submit_within;
    if (bounded && max_wait_ms == 0) return make_error_code(errc::full);
    const Duration deadline = bounded ? m.now + m.draw_timeout(max_wait_ms) : Duration::max();
    // The workers resume the waiting submitter once room_to_resume slots are free, not at the
    // first one.
    if (m.advance(deadline, [&] { return m.capacity - m.queue.size() >= m.room_to_resume; })) {
      return accept();
    }
    return make_error_code(errc::full);
  }

  void apply(PoolModel& m) const override { (void)expect(m); }

  void run(const PoolModel& m0, PoolSut& sut) const override {
    PoolModel m = m0;
    const std::error_code expected = expect(m);
    const std::size_t id = m0.jobs.size();
    sut.outcomes.emplace_back();
    sut.reports.push_back(0);
    Runtime& rt = sut.rt;
    const Context& ctx =
        context < 0 ? Context::background() : sut.contexts[static_cast<std::size_t>(context)].first;
    JobOptions opts;
    opts.on_complete = [&sut, id](const JobOutcome& o) {
      sut.outcomes[id] = o.status;
      ++sut.reports[id];
    };
    const Duration work = std::chrono::milliseconds(work_ms);
    Duration max_wait = std::chrono::milliseconds(max_wait_ms);
    if (kind == SubmitKind::submit_within && max_wait_ms > 0)
      max_wait = m.timeout_offset + max_wait;
    const std::error_code ec = sut.pool->submit(
        kind, ctx,
        [&rt, work](const Context& jc) {
          auto [timeout, cancel] = Context::with_timeout(jc, work, rt);
          timeout.wait();
          cancel();
        },
        max_wait, std::move(opts));
    bubble::wait();
    if (ec != expected) {
      BUBBLE_FAIL(std::string(scenarios::to_string(kind)) + " returned '" + ec.message() +
                  "', the model says '" + expected.message() + "'");
    }
    if (expected) {
      sut.outcomes.pop_back();
      sut.reports.pop_back();
    }
    check_agreement(m, sut);
  }

  void show(std::ostream& os) const override {
    os << to_string(kind)
       << "(context=" << (context < 0 ? std::string("background") : "c" + std::to_string(context))
       << ", work=" << show_duration(std::chrono::milliseconds(work_ms));
    if (kind == SubmitKind::submit_within) {
      os << ", max_wait=" << show_duration(std::chrono::milliseconds(max_wait_ms))
         << " (+1us per earlier timeout)";
    }
    os << ")";
  }
};

struct CancelContext : PoolCommand {
  int context = *rc::gen::inRange(0, kContexts);
  void apply(PoolModel& m) const override { m.cancel(context); }
  void run(const PoolModel& m0, PoolSut& sut) const override {
    PoolModel m = m0;
    apply(m);
    sut.contexts[static_cast<std::size_t>(context)].second();
    bubble::wait();
    check_agreement(m, sut);
  }
  void show(std::ostream& os) const override { os << "cancel(c" << context << ")"; }
};

struct Advance : PoolCommand {
  int ms = *rc::gen::inRange(1, 41);
  void apply(PoolModel& m) const override { m.advance(m.now + std::chrono::milliseconds(ms)); }
  void run(const PoolModel& m0, PoolSut& sut) const override {
    PoolModel m = m0;
    apply(m);
    bubble::sleep_and_wait(std::chrono::milliseconds(ms));
    check_agreement(m, sut);
  }
  void show(std::ostream& os) const override {
    os << "advance(" << show_duration(std::chrono::milliseconds(ms)) << ")";
  }
};

struct Shutdown : PoolCommand {
  int grace_ms = *rc::gen::inRange(0, 61);

  std::error_code expect(PoolModel& m) const {
    if (m.stopped) return {};
    m.closed = true;
    const Duration deadline = m.now + m.draw_timeout(grace_ms);
    if (m.advance(deadline, [&] {
          m.take();
          return m.stopped;
        })) {
      return {};
    }
    m.cancel_pool();
    m.stopped = true;
    return make_error_code(errc::deadline_exceeded);
  }
  void apply(PoolModel& m) const override { (void)expect(m); }
  void run(const PoolModel& m0, PoolSut& sut) const override {
    PoolModel m = m0;
    const Duration grace = std::chrono::milliseconds(grace_ms) + m0.timeout_offset + 1us;
    const std::error_code expected = expect(m);
    auto [deadline, cancel] = Context::with_timeout(Context::background(), grace, sut.rt);
    const std::error_code ec = sut.pool->shutdown(deadline);
    cancel();
    bubble::wait();
    if (ec != expected) {
      BUBBLE_FAIL("shutdown returned '" + ec.message() + "', the model says '" +
                  expected.message() + "'");
    }
    check_agreement(m, sut);
  }
  void show(std::ostream& os) const override {
    os << "shutdown(grace=" << show_duration(std::chrono::milliseconds(grace_ms))
       << " +1us per earlier timeout)";
  }
};

}  // namespace

void check_pool_against_model(const PoolImplementation& impl) {
  PoolModel initial;
  initial.workers = testing::draw(rc::gen::inRange(1, 4));
  initial.capacity = static_cast<std::size_t>(testing::draw(rc::gen::inRange(1, 4)));
  // 0 (automatic) to the capacity, for the implementations that honour it.
  const std::size_t room_to_resume =
      impl.room_to_resume ? static_cast<std::size_t>(testing::draw(
                                rc::gen::inRange<int>(0, static_cast<int>(initial.capacity) + 1)))
                          : 0;
  initial.room_to_resume =
      room_to_resume > 0 ? room_to_resume : std::max<std::size_t>(1, initial.capacity / 4);
  testing::run_property({}, [&](Runtime& rt) {
    PoolOptions options;
    options.workers = initial.workers;
    options.queue_capacity = static_cast<std::ptrdiff_t>(initial.capacity);
    options.room_to_resume = static_cast<std::ptrdiff_t>(room_to_resume);
    PoolSut sut{rt, rt.now(), {}, {}, {}, impl.make(options, rt)};
    for (int i = 0; i < kContexts; ++i)
      sut.contexts.push_back(Context::with_cancel(Context::background()));
    const auto commands = testing::draw(rc::state::gen::commands(
        initial, rc::state::gen::execOneOfWithArgs<Submit, Submit, Submit, CancelContext, Advance,
                                                   Advance, Shutdown>()));
    rc::state::runAll(commands, initial, sut);
    sut.pool.reset();
  });
}

}  // namespace bubble::scenarios
