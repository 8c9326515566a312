#pragma once

#include <initializer_list>

#include <bubble/context.hpp>

namespace bubble {

// signal_context returns a context that is cancelled (err() and cause() == errc::canceled) when
// the process receives one of `signals` (for example {SIGTERM, SIGINT}): Go's
// signal.NotifyContext, for graceful shutdown.
//
// On the system runtime (called outside a bubble):
// - The first call for a signal installs a process-wide handler for it with sigaction
//   (SA_RESTART) that stays installed: the signal's default action (usually terminating the
//   process) no longer happens. The handler is async-signal-safe: it only write()s the signal
//   number to a non-blocking self-pipe (saving and restoring errno). A watcher thread, started by
//   the first call, reads the pipe and cancels the matching contexts, running their callbacks on
//   the watcher thread.
// - Every context registered for a signal is cancelled by one delivery of it. A context is
//   forgotten once it ends or its last handle is destroyed.
// - A signal that cannot be handled (SIGKILL, SIGSTOP, an invalid number) throws
//   std::invalid_argument naming it; an empty list throws std::invalid_argument.
//
// In a bubble (called from a bubble thread): the context belongs to that bubble. Real signals do
// not reach it (they arrive outside the bubble); deliver_signal(sig), called from a thread of the
// same bubble, cancels it synchronously, deterministically.
//
// It takes no runtime argument: the runtime is always the caller's (current_runtime()), because
// the signal watcher is process-wide and a bubble's signal context must belong to the bubble that
// delivers its signals.
//
// Thread safety: may be called concurrently from any thread.
Context signal_context(std::initializer_list<int> signals);

// Simulates the delivery of `signal` for tests, through the same path as a real one:
// - from a bubble thread: cancels, before returning, that bubble's signal contexts watching
//   `signal`;
// - elsewhere: writes `signal` to the self-pipe exactly as the signal handler does, so the watcher
//   thread cancels the system runtime's contexts watching it, asynchronously (wait on the
//   context). Does nothing if no signal_context has been created yet.
void deliver_signal(int signal);

}  // namespace bubble
