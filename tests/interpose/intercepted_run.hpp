#pragma once

#include <functional>
#include <stdexcept>

#include <bubble/bubble.hpp>
#include <bubble/interpose.hpp>

// A bubble run whose threads' standard-library calls are intercepted.
inline bubble::Options intercepting(bubble::Options options = {}) {
  options.intercept_std = true;
  return options;
}

// Runs `body` in an intercepting bubble. The bodies call std::this_thread::sleep_for and read
// steady_clock as unmodified code does, which only the interposer turns into virtual time: if the
// run does not intercept (bubble::interpose not linked), the body is not run at all and the run
// fails, rather than sleep for real.
inline bubble::RunResult run_std(std::function<void()> body, bubble::Options options = {}) {
  return bubble::run(intercepting(std::move(options)), [body = std::move(body)](bubble::Runtime&) {
    if (!bubble::interpose::active()) {
      throw std::logic_error("run_std: the standard library is not intercepted in this run");
    }
    body();
  });
}
