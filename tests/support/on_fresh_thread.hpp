#pragma once

// Runs a test's body on a fresh OS thread: the engine keeps some storage per OS thread from one
// run to the next (the recorded picks, the timer storage), and a fresh thread starts with none
// and leaves none behind for the next test.

#include <thread>
#include <utility>

namespace bubble::test_support {

template <class F>
void on_fresh_thread(F f) {
  std::thread t(std::move(f));
  t.join();
}

}  // namespace bubble::test_support
