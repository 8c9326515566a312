#pragma once

// Private to the testing glue: capturing the GoogleTest failures of a bubble run.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace bubble::testing::detail {

// While it exists, the GoogleTest failures reported on the calling OS thread and on every other OS
// thread (each bubble thread of a ThreadModel::os_threads run has one) go to `parts` instead of
// the running test. It takes two of GoogleTest's fakes: a test may itself capture the calling
// thread's failures around the call, and GoogleTest sends a thread's failures to its own
// thread's fake before the all-threads one, so the all-threads fake alone would miss them.
class CapturedFailures {
 public:
  explicit CapturedFailures(::testing::TestPartResultArray* parts)
      : all_threads_(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, parts),
        this_thread_(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD,
                     parts) {}

 private:
  ::testing::ScopedFakeTestPartResultReporter all_threads_;
  ::testing::ScopedFakeTestPartResultReporter this_thread_;
};

}  // namespace bubble::testing::detail
