#pragma once

// Properties of bubble::Pool's promises about order and time: which queued job a worker starts
// next (priority, aging, tenants in turn), how long submit_within may wait while other
// submitters compete for the slots, and what a shutdown racing a burst of submits keeps. Each is
// a RapidCheck testable (no arguments; it draws its inputs with bubble::testing::draw).
namespace bubble::scenarios {

// Property: one worker serves jobs that arrive at generated instants (tenants 0-2, priorities
// 0-2, work 0-12 ms, aging off or 3-20 ms), and starts them in exactly the order a model of the
// header's rule gives: the job of highest effective priority (priority plus one per full aging
// step waited, at the take), ties to the level whose oldest job is older; within a priority,
// tenants in turn, one job each, in the order they became non-empty; within a tenant, first in,
// first out.
void pool_starts_jobs_in_priority_and_tenant_order();

// Property: while 2-4 submitters compete for the slots of a small pool (submit, try_submit and
// submit_within mixed, max_wait 0-30 ms), every submit_within returns {} within max_wait or
// errc::full at exactly max_wait, never later, however often another submitter takes the slot it
// waited for; submit never returns full, try_submit never waits.
void submit_within_never_waits_past_its_bound();

// Property: a shutdown that starts in the middle of a burst of submits (1-3 submitters pushing
// back to back while 1-2 workers take, so that jobs sit in the lock-free inbox when it closes)
// returns {} only once every accepted job has run, exactly once; a refused job never runs, and
// is refused only with errc::closed (or errc::full by try_submit).
void shutdown_racing_a_burst_runs_every_accepted_job();

}  // namespace bubble::scenarios
