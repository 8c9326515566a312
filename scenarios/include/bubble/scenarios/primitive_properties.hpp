#pragma once

// The properties of the "primitives" suite: what the headers of the framework's primitives
// promise (Semaphore, CondVar, Channel, select, Context) and their misuse checks, each a
// RapidCheck testable (no arguments; it draws its inputs with bubble::testing::draw, which shows
// them in a counterexample) that runs its case in bubbles and fails with a message naming the
// broken promise.
namespace bubble::scenarios {

// Property: whatever the sequence of arrivals (a thread that acquires one permit), release(n)
// calls (n = 0..3) and try_acquires, a Semaphore hands every released permit to the
// longest-waiting threads first — release(n) wakes exactly min(n, waiters) of them, in arrival
// order, and keeps the rest — never lets try_acquire take a permit ahead of a waiter, and its
// available() and waiters() are those of a counting model after every step.
void semaphore_hands_permits_in_fifo_order();

// Property: whatever the sequence of arrivals (a thread that waits on the CondVar once),
// notify_one and notify_all calls (with or without the mutex held), notify_one wakes exactly the
// longest-waiting thread (none if none waits: a notify is not stored), notify_all wakes exactly
// the threads waiting at that moment, and waiters() agrees with the model after every step.
void cond_var_wakes_exactly_whom_it_should();

// Property: a closed Channel still delivers every buffered value, once, in FIFO order, to
// receivers of every kind (receive, try_receive, receive_until, select) and only then reports
// errc::closed to each of them; close() fails the senders that waited for room with errc::closed
// and wakes the receivers that waited on the empty channel with errc::closed.
void closed_channel_drains_before_closed();

// Property: select performs exactly one ready case and no other (an unchosen send delivers
// nothing, an unchosen receive takes nothing), never a case that is not ready; under fifo it is
// the first ready case in argument order; under the random strategy every ready case is chosen
// with roughly uniform frequency (each between a third and five thirds of its fair share over
// 200 selects).
void select_chooses_among_ready_cases();

// Property: in a generated tree of contexts (with_cancel, with_timeout and with_deadline children,
// created at generated instants, some cancelled with a cause), every context's deadline() is the
// earliest of its own and its ancestors', and it ends at exactly the earliest of its deadline,
// its own cancellation and its ancestors' ends (at once if its parent had ended before it was
// made), with the err() and cause() of whichever came first.
void contexts_inherit_deadlines_and_cancellation();

// Property: every misuse a header promises to check (negative counts, sizes, weights and
// permits, releasing more than is held, counting a latch or wait group below zero, invalid pool,
// limiter and ticker options, negative expected durations) throws the promised exception type,
// with a message that names the offending value, and leaves the object unchanged.
void misuse_is_reported_and_changes_nothing();

}  // namespace bubble::scenarios
