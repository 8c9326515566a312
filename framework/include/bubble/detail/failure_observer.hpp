#pragma once

// For the testing glue: a function a bubble calls at the moment its run fails (when the failure is
// decided, before the teardown runs any thread), so that what the program reports after that
// moment (a GoogleTest assertion in code that ran on during the teardown) can be told apart.

namespace bubble::detail {

using FailureObserver = void (*)(void* context) noexcept;

// Sets the observer of the runs that the calling OS thread starts from now on (nullptr: none).
// A run takes the observer when it starts and calls it at most once, on whichever of its OS threads
// the failure is decided.
void set_failure_observer(FailureObserver observer, void* context) noexcept;

}  // namespace bubble::detail
