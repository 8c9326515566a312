// bubble::instrument used as an outside project would: a data race between two std::threads is
// reported by a bubble, and the same program with a mutex passes. Exits 0 when both hold.
#include <bubble/bubble.hpp>

#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace {

// Two threads add to a counter; with `lock`, under one mutex.
std::string run_counter(bool lock) {
  bubble::Options options;
  options.intercept_std = true;
  try {
    bubble::run(options, [&](bubble::Runtime&) {
      int counter = 0;
      std::mutex m;
      auto add = [&] {
        std::unique_lock<std::mutex> guard(m, std::defer_lock);
        if (lock) guard.lock();
        ++counter;
      };
      std::thread a(add);
      std::thread b(add);
      a.join();
      b.join();
    });
    return "";
  } catch (const bubble::RunFailure& failure) {
    return failure.what();
  }
}

}  // namespace

int main() {
  const std::string racy = run_counter(false);
  if (racy.find("bubble: data race: ") == std::string::npos) {
    std::printf("the race was not reported:\n%s\n", racy.c_str());
    return 1;
  }
  const std::string locked = run_counter(true);
  if (!locked.empty()) {
    std::printf("the locked counter failed:\n%s\n", locked.c_str());
    return 1;
  }
  std::printf("bubble::instrument: the race is reported, the locked counter passes\n");
  return 0;
}
