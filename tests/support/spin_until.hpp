#pragma once

// Waits, on the system runtime, for a condition that another OS thread makes true (typically "n
// threads are parked on this primitive"): a test's way to reach a known state before it acts,
// without sleeping for a guessed time.

#include <thread>

namespace bubble::test_support {

// Returns once `pred()` is true, yielding the processor between checks. Spins forever if it
// never becomes true (CTest's timeout then ends the test).
template <class Pred>
void spin_until(Pred pred) {
  while (!pred()) std::this_thread::yield();
}

}  // namespace bubble::test_support
