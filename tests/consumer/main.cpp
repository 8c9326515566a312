// Uses bubble as an outside project would: a pool fed through a rate limiter, in a bubble, with
// an exact check of virtual time. Exits 0 when everything behaves as documented.
#include <bubble/bubble.hpp>
#include <bubble/pool.hpp>
#include <bubble/rate_limiter.hpp>
#include <bubble/version.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>

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
  // Six jobs at two per second: admitted at 0 s, 0 s, 1 s, 1 s, 2 s, 2 s.
  return jobs_run == 6 && elapsed == 2s ? 0 : 1;
}
