#pragma once

// A pool job that takes a known amount of (virtual) time.

#include <bubble/pool/job.hpp>
#include <bubble/runtime.hpp>
#include <bubble/time.hpp>

namespace bubble::test_support {

// A job that sleeps for `d` on the current runtime and does nothing else.
inline Job sleeper(Duration d) {
  return [d] { sleep_for(d); };
}

}  // namespace bubble::test_support
