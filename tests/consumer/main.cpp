// Uses bubble as an outside project would: a pool fed through a rate limiter, in a bubble, with
// an exact check of virtual time, and std::this_thread::sleep_for in a bubble that intercepts the
// standard library (bubble::interpose). Exits 0 when everything behaves as documented.
#include <bubble/bubble.hpp>
#include <bubble/interpose.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/version.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

using namespace std::chrono_literals;

int main() {
  int jobs_run = 0;
  bubble::Duration elapsed{};
  bubble::run({}, [&](bubble::Runtime& rt) {
    bubble::Pool pool({.workers = 2, .queue_capacity = 8}, rt);
    bubble::RateLimiter limiter(pool, 2, 1s);  // two jobs per second
    const bubble::TimePoint start = rt.now();
    for (int i = 0; i < 6; ++i) {
      const std::error_code ec = limiter.submit(bubble::Context::background(),
                                                [&](const bubble::Context&) { ++jobs_run; });
      if (ec) std::printf("submit failed: %s\n", ec.message().c_str());
    }
    elapsed = rt.now() - start;
    (void)pool.shutdown(bubble::Context::background());
  });
  std::printf("bubble %s: %d jobs, last admitted after %lld ms of virtual time\n",
              std::string(bubble::kVersion).c_str(), jobs_run,
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  // A std::thread sleeping for an hour in a bubble that intercepts the standard library: returns
  // at once, an hour later in virtual time.
  bubble::Options options;
  options.intercept_std = true;
  bool intercepted = false;
  const bubble::RunResult std_run = bubble::run(options, [&](bubble::Runtime&) {
    intercepted = bubble::interpose::active();
    if (!intercepted) return;  // The sleep would be a real one.
    std::thread sleeper([] { std::this_thread::sleep_for(1h); });
    sleeper.join();
  });
  std::printf("std::thread slept %lld s of virtual time (intercepted: %s)\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::seconds>(std_run.elapsed).count()),
              intercepted ? "yes" : "no");
  // Six jobs at two per second: admitted at 0 s, 0 s, 1 s, 1 s, 2 s, 2 s.
  return jobs_run == 6 && elapsed == 2s && intercepted && std_run.elapsed == 1h ? 0 : 1;
}
