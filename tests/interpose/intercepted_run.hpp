#pragma once

#include <functional>

#include <bubble/bubble.hpp>

// A bubble run whose threads' standard-library calls are intercepted.
inline bubble::Options intercepting(bubble::Options options = {}) {
  options.intercept_std = true;
  return options;
}

inline bubble::RunResult run_std(std::function<void()> body, bubble::Options options = {}) {
  return bubble::run(intercepting(std::move(options)),
                     [body = std::move(body)](bubble::Runtime&) { body(); });
}
