// A deadlock in a program that uses bubble as an outside project does, compiled with debug
// information: the report gives each blocked thread's location as the line of this file that
// blocked, not a line of bubble's own headers, wherever bubble is (installed under a prefix, or a
// source tree added with add_subdirectory). Exits 0 when every blocked thread is placed here.
#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/testing/stacks.hpp>
#include <bubble/thread.hpp>

#include <cstdio>
#include <mutex>
#include <sstream>
#include <string>

int main() {
  std::string message;
  try {
    bubble::run({.symbolize_stacks = bubble::testing::stack_symbolizer()}, [](bubble::Runtime& rt) {
      bubble::Mutex a("a", rt);
      bubble::Mutex b("b", rt);
      bubble::Thread other(
          "other",
          [&] {
            std::lock_guard lock_b(b);
            rt.yield();
            std::lock_guard lock_a(a);
          },
          rt);
      std::lock_guard lock_a(a);
      rt.yield();
      std::lock_guard lock_b(b);
    });
  } catch (const bubble::DeadlockError& e) {
    message = e.what();
  }
  std::puts(message.c_str());
  std::istringstream lines(message);
  int placed = 0;
  int blocked = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  thread #", 0) != 0 ||
        line.find(": blocked on Mutex::lock") == std::string::npos) {
      continue;
    }
    ++blocked;
    if (line.find(" at ") != std::string::npos &&
        line.find("report.cpp:", line.rfind(" at ")) != std::string::npos) {
      ++placed;
    }
  }
  std::printf("%d of %d blocked threads placed at this file's lines\n", placed, blocked);
  return blocked == 2 && placed == 2 ? 0 : 1;
}
