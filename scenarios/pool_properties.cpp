#include <bubble/errc.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/thread.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace bubble::scenarios {

const char* to_string(JobBehaviour b) noexcept {
  switch (b) {
    case JobBehaviour::watches_context:
      return "watches_context";
    case JobBehaviour::ignores_context:
      return "ignores_context";
    case JobBehaviour::throws:
      return "throws";
  }
  return "unknown";
}

void showValue(const JobSpec& j, std::ostream& os) {
  os << "JobSpec{" << to_string(j.kind) << ", gap=" << show_duration(j.gap)
     << ", work=" << show_duration(j.work);
  if (j.kind == SubmitKind::submit_within) os << ", max_wait=" << show_duration(j.max_wait);
  os << ", " << to_string(j.behaviour) << ", tenant=t" << j.tenant << ", priority=" << j.priority
     << ", context=";
  if (j.context < 0) {
    os << "background";
  } else {
    os << "c" << j.context;
  }
  if (j.expected) os << ", expected_duration=" << show_duration(*j.expected);
  os << "}";
}

void showValue(const ContextSpec& c, std::ostream& os) {
  os << "ContextSpec{cancel_at=" << (c.cancel_at ? show_duration(*c.cancel_at) : "never")
     << ", deadline=" << (c.deadline ? show_duration(*c.deadline) : "none") << "}";
}

void showValue(const ShutdownSpec& s, std::ostream& os) {
  os << "ShutdownSpec{at=" << show_duration(s.at) << ", grace=" << show_duration(s.grace) << "}";
}

void showValue(const PoolCase& c, std::ostream& os) {
  os << "PoolCase{workers=" << c.workers << ", capacity=" << c.capacity
     << ", room_to_resume=" << c.room_to_resume << ", aging_step=" << show_duration(c.aging_step)
     << ", max_queued_per_tenant=" << c.max_queued_per_tenant
     << ", max_running_per_tenant=" << c.max_running_per_tenant << ",\n  strategies=[";
  for (std::size_t i = 0; i < c.strategies.size(); ++i) {
    if (i > 0) os << ", ";
    showValue(c.strategies[i], os);
  }
  os << "]";
  for (std::size_t s = 0; s < c.submitters.size(); ++s) {
    os << ",\n  submitter " << s << ": [";
    for (std::size_t j = 0; j < c.submitters[s].size(); ++j) {
      if (j > 0) os << ",\n    ";
      showValue(c.submitters[s][j], os);
    }
    os << "]";
  }
  for (std::size_t i = 0; i < c.contexts.size(); ++i) {
    os << ",\n  c" << i << " = ";
    showValue(c.contexts[i], os);
  }
  for (const auto& s : c.shutdowns) {
    os << ",\n  ";
    showValue(s, os);
  }
  if (c.shutdowns.empty()) os << ",\n  no shutdown: destructor at " << show_duration(c.destroy_at);
  os << "}";
}

namespace {

using namespace std::chrono_literals;

rc::Gen<JobSpec> job_spec(const PoolImplementation& impl, int contexts) {
  return rc::gen::exec([impl, contexts] {
    JobSpec j;
    j.kind =
        *rc::gen::element(SubmitKind::submit, SubmitKind::try_submit, SubmitKind::submit_within);
    j.gap = *rc::gen::weightedOneOf<DurationValue>(
        {{3, milliseconds_in(0, 0)}, {5, milliseconds_in(1, 20)}});
    j.work = *rc::gen::weightedOneOf<DurationValue>(
        {{1, milliseconds_in(0, 0)}, {6, milliseconds_in(1, 60)}, {1, milliseconds_in(150, 300)}});
    if (j.kind == SubmitKind::submit_within) j.max_wait = *milliseconds_in(0, 40);
    j.behaviour = *rc::gen::weightedElement<JobBehaviour>({{8, JobBehaviour::watches_context},
                                                           {2, JobBehaviour::ignores_context},
                                                           {1, JobBehaviour::throws}});
    if (impl.tenants) j.tenant = *rc::gen::inRange(0, 3);
    if (impl.priorities) j.priority = *rc::gen::inRange(0, 3);
    if (contexts > 0 && *rc::gen::inRange(0, 3) == 0) j.context = *rc::gen::inRange(0, contexts);
    if (impl.expected_durations && *rc::gen::inRange(0, 4) == 0)
      j.expected = *milliseconds_in(0, 40);
    return j;
  });
}

// The instants at which the submitters plan to submit, if no submit waited.
std::vector<Duration> planned_instants(const std::vector<std::vector<JobSpec>>& submitters) {
  std::vector<Duration> out;
  for (const auto& jobs : submitters) {
    Duration t{};
    for (const auto& j : jobs) {
      t += j.gap.value;
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace

rc::Gen<PoolCase> pool_case(const PoolImplementation& impl) {
  return rc::gen::exec([impl] {
    PoolCase c;
    c.workers = *rc::gen::inRange(1, 4);
    c.capacity = *rc::gen::inRange(1, 5);
    if (impl.room_to_resume) c.room_to_resume = *rc::gen::inRange(0, c.capacity + 1);
    if (impl.priorities && *rc::gen::arbitrary<bool>()) c.aging_step = *milliseconds_in(1, 20);
    if (impl.tenants) {
      c.max_queued_per_tenant = *rc::gen::weightedElement<int>({{2, 0}, {1, 1}, {1, 2}});
      c.max_running_per_tenant = *rc::gen::weightedElement<int>({{2, 0}, {1, 1}, {1, 2}});
    }
    const int contexts = *rc::gen::inRange(0, 4);
    for (int i = 0; i < contexts; ++i) {
      ContextSpec spec;
      if (*rc::gen::arbitrary<bool>()) spec.cancel_at = *milliseconds_in(0, 100);
      if (*rc::gen::arbitrary<bool>()) spec.deadline = *milliseconds_in(1, 120);
      c.contexts.push_back(spec);
    }
    const auto submitters = static_cast<std::size_t>(*rc::gen::inRange(1, 5));
    for (std::size_t s = 0; s < submitters; ++s) {
      c.submitters.push_back(*rc::gen::container<std::vector<JobSpec>>(
          *rc::gen::inRange<std::size_t>(0, 9), job_spec(impl, contexts)));
    }
    const std::vector<Duration> instants = planned_instants(c.submitters);
    const int shutdowns = *rc::gen::weightedElement<int>({{1, 0}, {5, 1}, {2, 2}});
    for (int i = 0; i < shutdowns; ++i) {
      ShutdownSpec spec;
      if (!instants.empty() && *rc::gen::inRange(0, 4) != 0) {
        const Duration at = *rc::gen::elementOf(instants);
        spec.at = DurationValue{at + *rc::gen::element(0ms, 0ms, 1ms)};
      } else {
        spec.at = *milliseconds_in(0, 150);
      }
      spec.grace = *rc::gen::weightedOneOf<DurationValue>(
          {{1, milliseconds_in(0, 0)}, {3, milliseconds_in(1, 100)}});
      c.shutdowns.push_back(spec);
    }
    if (shutdowns == 0) c.destroy_at = *milliseconds_in(0, 150);
    c.strategies = *rc::gen::container<std::vector<StrategyValue>>(
        static_cast<std::size_t>(*rc::gen::inRange(1, 5)), case_strategy());
    return c;
  });
}

namespace {

// What one job went through, as its submitter, its body and its on_complete saw it.
struct JobRecord {
  bool called = false;  // the submit call has returned
  std::error_code submit_result;
  TimePoint submit_start{};
  TimePoint submit_end{};
  int runs = 0;
  bool threw = false;
  bool ctx_done_at_return = false;
  int outcomes = 0;
  JobStatus status = JobStatus::done;
  bool submitter_ctx_done_at_outcome = false;
};

[[noreturn]] void violated(const std::string& what) {
  throw PropertyViolation("pool property violated: " + what);
}

std::string job_name(std::size_t s, std::size_t j) {
  return "job " + std::to_string(j) + " of submitter " + std::to_string(s);
}

void work_for(Runtime& rt, const Context& ctx, Duration work, bool watch) {
  if (!watch) {
    rt.sleep_for(work);
    return;
  }
  auto [timeout, cancel] = Context::with_timeout(ctx, work, rt);
  timeout.wait();
  cancel();
}

}  // namespace

void showValue(const PoolCoverage& c, std::ostream& os) {
  os << "paths reached in " << c.runs << " passing runs: " << c.accepted << " jobs accepted ("
     << c.done << " done, " << c.canceled << " canceled, " << c.failed << " failed, " << c.too_late
     << " too_late); refused: " << c.refused_closed << " closed, " << c.refused_full << " full, "
     << c.refused_tenant_limit << " tenant_limit, " << c.refused_by_context << " by their context; "
     << c.waiting_when_shutdown_started << " submits waiting when shutdown started; "
     << c.shutdown_deadline_exceeded << " shutdowns past their deadline; "
     << c.destructor_without_shutdown << " destructors without shutdown";
}

namespace {

// How many accepted jobs ended with each status.
struct StatusCounts {
  std::uint64_t done = 0;
  std::uint64_t canceled = 0;
  std::uint64_t too_late = 0;
  std::uint64_t failed = 0;

  void add(JobStatus status) noexcept {
    switch (status) {
      case JobStatus::done:
        ++done;
        return;
      case JobStatus::canceled:
        ++canceled;
        return;
      case JobStatus::too_late:
        ++too_late;
        return;
      case JobStatus::failed:
        ++failed;
        return;
    }
  }
};

// One run of a PoolCase in a bubble: drive() makes the pool and the threads the case describes
// (cancellers, submitters, shutdowns), lets them run and destroys the pool; check() then holds
// what every job went through against the pool's promises, and adds the paths it reached to a
// PoolCoverage.
class PoolCaseRun {
 public:
  PoolCaseRun(const PoolImplementation& impl, const PoolCase& c, Runtime& rt)
      : impl_(impl),
        c_(c),
        rt_(rt),
        start_(rt.now()),
        records_(c.submitters.size()),
        shutdown_results_(c.shutdowns.size()) {
    for (const auto& spec : c.contexts) {
      contexts_.push_back(spec.deadline
                              ? Context::with_timeout(Context::background(), *spec.deadline, rt)
                              : Context::with_cancel(Context::background()));
    }
    for (std::size_t s = 0; s < c.submitters.size(); ++s)
      records_[s].resize(c.submitters[s].size());
  }

  void drive() {
    PoolOptions options;
    options.workers = c_.workers;
    options.queue_capacity = c_.capacity;
    options.room_to_resume = c_.room_to_resume;
    options.name = "pool";
    options.aging_step = c_.aging_step;
    options.max_queued_per_tenant = c_.max_queued_per_tenant;
    options.max_running_per_tenant = c_.max_running_per_tenant;
    pool_ = impl_.make(options, rt_);
    {
      std::vector<Thread> threads;
      for (std::size_t i = 0; i < c_.contexts.size(); ++i) {
        if (!c_.contexts[i].cancel_at) continue;
        threads.emplace_back(
            "canceller", [this, i] { cancel_context(i); }, rt_);
      }
      for (std::size_t s = 0; s < c_.submitters.size(); ++s) {
        threads.emplace_back(
            "submitter-" + std::to_string(s), [this, s] { submit_all(s); }, rt_);
      }
      for (std::size_t i = 0; i < c_.shutdowns.size(); ++i) {
        threads.emplace_back(
            "shutdown-" + std::to_string(i), [this, i] { shut_down(i); }, rt_);
      }
      if (c_.shutdowns.empty()) rt_.sleep_until(start_ + c_.destroy_at.value);
    }
    if (!c_.shutdowns.empty()) final_stats_ = pool_->stats();
    pool_.reset();  // the destructor, after shutdown or instead of it
    // The first violation seen while the pool ran, reported now that it is gone (see note()).
    if (!violation_.empty()) violated(violation_);
  }

  void check(PoolCoverage* coverage) {
    all_shutdowns_succeeded_ =
        !c_.shutdowns.empty() && std::all_of(shutdown_results_.begin(), shutdown_results_.end(),
                                             [](const std::error_code& ec) { return !ec; });
    for (std::size_t s = 0; s < c_.submitters.size(); ++s) {
      for (std::size_t j = 0; j < c_.submitters[s].size(); ++j) check_job(s, j);
    }
    if (final_stats_) check_stats(*final_stats_);
    if (coverage != nullptr) add_coverage(*coverage);
  }

 private:
  void cancel_context(std::size_t i) {
    rt_.sleep_until(start_ + c_.contexts[i].cancel_at->value);
    contexts_[i].second();
  }

  void shut_down(std::size_t i) {
    rt_.sleep_until(start_ + c_.shutdowns[i].at.value);
    auto [deadline, cancel] =
        Context::with_timeout(Context::background(), c_.shutdowns[i].grace, rt_);
    if (!first_shutdown_) first_shutdown_ = rt_.now();
    shutdown_results_[i] = pool_->shutdown(deadline);
    cancel();
  }

  // Submitter `s`: each of its jobs after its gap, recording what the submit call did.
  void submit_all(std::size_t s) {
    for (std::size_t j = 0; j < c_.submitters[s].size(); ++j) {
      const JobSpec& spec = c_.submitters[s][j];
      JobRecord& rec = records_[s][j];
      rt_.sleep_for(spec.gap);
      const Context& ctx = spec.context < 0 ? Context::background() : contexts_[spec.context].first;
      JobOptions opts;
      opts.priority = spec.priority;
      opts.tenant = "t" + std::to_string(spec.tenant);
      if (spec.expected) opts.expected_duration = spec.expected->value;
      opts.on_complete = [&rec, &ctx](const JobOutcome& outcome) {
        ++rec.outcomes;
        rec.status = outcome.status;
        rec.submitter_ctx_done_at_outcome = ctx.done();
      };
      rec.submit_start = rt_.now();
      rec.submit_result =
          pool_->submit(spec.kind, ctx, make_job(s, j), spec.max_wait, std::move(opts));
      rec.submit_end = rt_.now();
      rec.called = true;
      if (!rec.submit_result) {
        const std::size_t depth = pool_->stats().queue_depth;
        if (depth > static_cast<std::size_t>(c_.capacity)) {
          note("after " + job_name(s, j) + " was accepted the queue holds " +
               std::to_string(depth) + " jobs, more than its capacity " +
               std::to_string(c_.capacity));
        }
      }
    }
  }

  // Job `j` of submitter `s`: counts itself among the running jobs (of the pool, of its tenant),
  // works for its time, and throws if its spec says so.
  Job make_job(std::size_t s, std::size_t j) {
    const JobSpec& spec = c_.submitters[s][j];
    return [this, &spec, &rec = records_[s][j], name = job_name(s, j)](const Context& jc) {
      const bool cap_running = c_.max_running_per_tenant > 0;
      const int cap = c_.max_running_per_tenant;
      ++rec.runs;
      if (++busy_ > c_.workers) {
        note(name + " started while " + std::to_string(c_.workers) +
             " jobs were already running on as many workers");
      }
      struct Busy {
        int& n;
        ~Busy() { --n; }
      } busy_guard{busy_};
      int& running = running_[static_cast<std::size_t>(spec.tenant)];
      if (cap_running && ++running > cap) {
        note(name + " started while its tenant already had " + std::to_string(cap) +
             " jobs running (max_running_per_tenant)");
      } else if (!cap_running) {
        ++running;
      }
      struct Leave {
        int& n;
        ~Leave() { --n; }
      } leave{running};
      work_for(rt_, jc, spec.work, spec.behaviour == JobBehaviour::watches_context);
      rec.ctx_done_at_return = jc.done();
      if (spec.behaviour == JobBehaviour::throws) {
        rec.threw = true;
        throw std::runtime_error("the job fails on purpose");
      }
    };
  }

  // The first violation seen while the pool runs. It is reported once the pool is gone, not thrown
  // on the spot: a job's exceptions are its own (the pool counts them as failures), and a run that
  // ends normally reports the violation with every thread's record intact.
  void note(std::string what) {
    if (violation_.empty()) violation_ = std::move(what);
  }

  void check_job(std::size_t s, std::size_t j) {
    const JobSpec& spec = c_.submitters[s][j];
    const JobRecord& rec = records_[s][j];
    const std::string name = job_name(s, j);
    const std::error_code ec = rec.submit_result;
    if (ec == errc::closed) ++seen_.refused_closed;
    if (ec == errc::full) ++seen_.refused_full;
    if (ec == errc::tenant_limit) ++seen_.refused_tenant_limit;
    if (ec == errc::canceled || ec == errc::deadline_exceeded) ++seen_.refused_by_context;
    if (first_shutdown_ && rec.submit_start < *first_shutdown_ &&
        rec.submit_end == *first_shutdown_) {
      ++seen_.waiting_when_shutdown_started;
    }
    if (ec) {
      check_refused(spec, rec, name);
    } else {
      check_accepted(spec, rec, name);
    }
    if (first_shutdown_) check_around_shutdown(spec, rec, name);
  }

  // A refused job never ran, and was refused only as the case allows.
  void check_refused(const JobSpec& spec, const JobRecord& rec, const std::string& name) {
    const std::error_code ec = rec.submit_result;
    if (rec.runs != 0 || rec.outcomes != 0) {
      violated(name + " was refused (" + ec.message() + ") but ran " + std::to_string(rec.runs) +
               " times and reported " + std::to_string(rec.outcomes) + " outcomes");
    }
    const bool allowed =
        ec == errc::closed || (ec == errc::full && spec.kind != SubmitKind::submit) ||
        (ec == errc::tenant_limit && c_.max_queued_per_tenant > 0) ||
        (spec.context >= 0 && (ec == errc::canceled || ec == errc::deadline_exceeded));
    if (!allowed) violated(name + " was refused with an unexpected error: " + ec.message());
  }

  // An accepted job ended exactly once, with a status that agrees with how it ran.
  void check_accepted(const JobSpec& spec, const JobRecord& rec, const std::string& name) {
    ++accepted_;
    ++seen_.accepted;
    if (rec.outcomes != 1) {
      violated(name + " was accepted but reported " + std::to_string(rec.outcomes) +
               " outcomes (ran " + std::to_string(rec.runs) + " times)");
    }
    counts_.add(rec.status);
    switch (rec.status) {
      case JobStatus::done:
        if (rec.runs != 1 || rec.threw || rec.ctx_done_at_return) {
          violated(name + " was reported done but ran " + std::to_string(rec.runs) +
                   " times (threw: " + (rec.threw ? "yes" : "no") +
                   ", context done at return: " + (rec.ctx_done_at_return ? "yes" : "no") + ")");
        }
        break;
      case JobStatus::canceled:
        if (rec.runs != 1 || rec.threw || !rec.ctx_done_at_return) {
          violated(name + " was reported canceled but ran " + std::to_string(rec.runs) +
                   " times (context done at return: " + (rec.ctx_done_at_return ? "yes" : "no") +
                   ")");
        }
        if (all_shutdowns_succeeded_ && !rec.submitter_ctx_done_at_outcome) {
          violated(name +
                   " was canceled although every shutdown succeeded and its "
                   "submitter's context had not ended");
        }
        break;
      case JobStatus::failed:
        if (rec.runs != 1 || !rec.threw) {
          violated(name + " was reported failed but ran " + std::to_string(rec.runs) +
                   " times without throwing");
        }
        break;
      case JobStatus::too_late:
        if (rec.runs != 0 || !spec.expected || spec.context < 0 ||
            !c_.contexts[spec.context].deadline) {
          violated(name + " was reported too_late but ran " + std::to_string(rec.runs) +
                   " times or had no expected duration and deadline");
        }
        break;
    }
  }

  // Shutdown closes at once: no submit waits across its start, and every later one is refused at
  // once.
  void check_around_shutdown(const JobSpec& spec, const JobRecord& rec, const std::string& name) {
    const std::error_code ec = rec.submit_result;
    const TimePoint t = *first_shutdown_;
    if (rec.submit_start <= t && rec.submit_end > t) {
      violated(name + "'s " + to_string(spec.kind) + " started at " +
               show_duration(rec.submit_start - start_) + " and was still waiting when " +
               "shutdown started at " + show_duration(t - start_) + "; it returned at " +
               show_duration(rec.submit_end - start_) + " (" +
               (ec ? ec.message() : std::string("accepted")) + ")");
    }
    if (rec.submit_start > t &&
        (rec.submit_end != rec.submit_start ||
         !(ec == errc::closed || ec == errc::canceled || ec == errc::deadline_exceeded))) {
      violated(name + " was submitted at " + show_duration(rec.submit_start - start_) +
               ", after shutdown started at " + show_duration(t - start_) + ", and got " +
               (ec ? ec.message() : std::string("accepted")) + " at " +
               show_duration(rec.submit_end - start_));
    }
  }

  // The pool's counters agree with what the jobs saw.
  void check_stats(const PoolStats& st) const {
    if (st.submitted != accepted_ || st.completed != counts_.done ||
        st.canceled != counts_.canceled || st.too_late != counts_.too_late ||
        st.failed != counts_.failed ||
        st.completed + st.canceled + st.failed + st.too_late != accepted_) {
      violated("the pool's counters disagree with what the jobs saw: submitted " +
               std::to_string(st.submitted) + " / accepted " + std::to_string(accepted_) +
               ", completed " + std::to_string(st.completed) + " / " +
               std::to_string(counts_.done) + ", canceled " + std::to_string(st.canceled) + " / " +
               std::to_string(counts_.canceled) + ", too_late " + std::to_string(st.too_late) +
               " / " + std::to_string(counts_.too_late) + ", failed " + std::to_string(st.failed) +
               " / " + std::to_string(counts_.failed));
    }
  }

  void add_coverage(PoolCoverage& coverage) {
    seen_.done = counts_.done;
    seen_.canceled = counts_.canceled;
    seen_.too_late = counts_.too_late;
    seen_.failed = counts_.failed;
    seen_.shutdown_deadline_exceeded =
        static_cast<std::uint64_t>(std::count(shutdown_results_.begin(), shutdown_results_.end(),
                                              make_error_code(errc::deadline_exceeded)));
    seen_.destructor_without_shutdown = c_.shutdowns.empty() ? 1 : 0;
    coverage.runs += 1;
    coverage.accepted += seen_.accepted;
    coverage.refused_closed += seen_.refused_closed;
    coverage.refused_full += seen_.refused_full;
    coverage.refused_tenant_limit += seen_.refused_tenant_limit;
    coverage.refused_by_context += seen_.refused_by_context;
    coverage.done += seen_.done;
    coverage.canceled += seen_.canceled;
    coverage.failed += seen_.failed;
    coverage.too_late += seen_.too_late;
    coverage.waiting_when_shutdown_started += seen_.waiting_when_shutdown_started;
    coverage.shutdown_deadline_exceeded += seen_.shutdown_deadline_exceeded;
    coverage.destructor_without_shutdown += seen_.destructor_without_shutdown;
  }

  const PoolImplementation& impl_;
  const PoolCase& c_;
  Runtime& rt_;
  const TimePoint start_;
  std::vector<std::pair<Context, CancelFunc>> contexts_;
  std::vector<std::vector<JobRecord>> records_;
  std::unique_ptr<PoolUnderTest> pool_;
  std::array<int, 3> running_{};  // Jobs running per tenant.
  int busy_ = 0;                  // Jobs running.
  std::string violation_;
  std::vector<std::error_code> shutdown_results_;
  std::optional<TimePoint> first_shutdown_;
  std::optional<PoolStats> final_stats_;
  // What check() finds.
  bool all_shutdowns_succeeded_ = false;
  std::uint64_t accepted_ = 0;
  StatusCounts counts_;
  PoolCoverage seen_;
};

}  // namespace

std::function<void(Runtime&)> pool_case_body(const PoolImplementation& impl, const PoolCase& c,
                                             PoolCoverage* coverage) {
  return [impl, c, coverage](Runtime& rt) {
    PoolCaseRun run(impl, c, rt);
    run.drive();
    run.check(coverage);
  };
}

}  // namespace bubble::scenarios
