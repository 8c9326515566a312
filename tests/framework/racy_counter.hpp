#pragma once

#include <bubble/runtime.hpp>

#include <memory>

// The lost-update program the testing glue's tests explore and shrink schedules of.
namespace bubble::test_programs {

// Two threads increment a shared counter with a read, a scheduling point, and a write: an update
// is lost (the result is 1 instead of 2) only if the other thread runs between one thread's read
// and its write (a preemption). Returns the counter once both threads are joined.
inline int racy_counter(Runtime& rt) {
  int x = 0;
  auto increment = [&rt, &x] {
    const int read = x;
    rt.schedule_point({"counter.read", 0, SourceLocation::current()});
    x = read + 1;
  };
  std::unique_ptr<ThreadHandle> a = rt.spawn("a", increment);
  std::unique_ptr<ThreadHandle> b = rt.spawn("b", increment);
  a->join();
  b->join();
  return x;
}

}  // namespace bubble::test_programs
