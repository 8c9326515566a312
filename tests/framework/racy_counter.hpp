#pragma once

#include <bubble/bubble.hpp>
#include <bubble/runtime.hpp>
#include <bubble/strategy.hpp>

#include <memory>
#include <string>
#include <vector>

// The programs the testing glue's tests explore and shrink schedules of: a lost update, and an
// interleaving of three threads.
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

// racy_counter's result when it runs as the root thread of a fresh bubble under `strategy`.
inline int racy_counter_under(const Strategy& strategy) {
  Options options;
  options.strategy = strategy;
  int x = 0;
  (void)run(options, [&x](Runtime& rt) { x = racy_counter(rt); });
  return x;
}

// Three threads that each take five steps; the order in which the steps happen depends on the
// schedule. Returns the order as a string of thread letters.
inline std::string interleave(Runtime& rt) {
  std::string order;
  std::vector<std::unique_ptr<ThreadHandle>> threads;
  for (char name : {'a', 'b', 'c'}) {
    threads.push_back(rt.spawn(std::string(1, name), [&rt, &order, name] {
      for (int i = 0; i < 5; ++i) {
        order += name;
        rt.schedule_point({"step", 0, SourceLocation::current()});
      }
    }));
  }
  for (auto& t : threads) t->join();
  return order;
}

}  // namespace bubble::test_programs
