// Clocks, sleeps and yields: inside an intercepting bubble they read and wait on virtual time;
// everywhere else they are the real functions.

#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>

#include "caller.hpp"
#include "real.hpp"
#include "time_mapping.hpp"

using bubble::interpose::detail::intercepting;
namespace d = bubble::interpose::detail;

namespace {

// The real sched_yield, resolved when the program is loaded rather than on first use: sanitizer
// runtimes call sched_yield while they hold their allocator's lock (LeakSanitizer's
// stop-the-world, at exit, spins with it while other threads are alive), and resolving it then
// would deadlock, since dlsym allocates.
constinit std::atomic<int (*)()> real_sched_yield{nullptr};

[[gnu::constructor]] void resolve_sched_yield() noexcept {
  real_sched_yield.store(
      reinterpret_cast<int (*)()>(d::resolve_next("sched_yield", "__interceptor_sched_yield")),
      std::memory_order_relaxed);
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t clock, struct timespec* ts) noexcept {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(clock_gettime)(clock, ts);
  switch (d::classify(clock)) {
    case d::ClockKind::steady:
      *ts = d::to_timespec(rt->now().time_since_epoch());
      return 0;
    case d::ClockKind::wall:
      *ts = d::to_timespec(rt->wall_now().time_since_epoch());
      return 0;
    case d::ClockKind::other:
      break;
  }
  return BUBBLE_REAL(clock_gettime)(clock, ts);
}

int gettimeofday(struct timeval* tv, void* tz) noexcept {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(gettimeofday)(tv, tz);
  // glibc declares `tv` nonnull.
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(rt->wall_now().time_since_epoch());
  tv->tv_sec = static_cast<time_t>(us.count() / 1'000'000);
  tv->tv_usec = static_cast<suseconds_t>(us.count() % 1'000'000);
  if (tz != nullptr) *static_cast<struct timezone*>(tz) = {};  // UTC, as the bubble's wall view.
  return 0;
}

time_t time(time_t* out) noexcept {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(time)(out);
  const auto s =
      std::chrono::duration_cast<std::chrono::seconds>(rt->wall_now().time_since_epoch());
  const auto t = static_cast<time_t>(s.count());
  if (out != nullptr) *out = t;
  return t;
}

int nanosleep(const struct timespec* req, struct timespec* rem) {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(nanosleep)(req, rem);
  if (req == nullptr || req->tv_nsec < 0 || req->tv_nsec >= 1'000'000'000 || req->tv_sec < 0) {
    errno = EINVAL;
    return -1;
  }
  rt->sleep_for(d::to_duration(*req), BUBBLE_CALLER(nanosleep));
  if (rem != nullptr) *rem = {};
  return 0;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(clock_nanosleep)(clock, flags, req, rem);
  const d::ClockKind kind = d::classify(clock);
  if (kind == d::ClockKind::other) return ENOTSUP;  // CPU-time clocks: no virtual equivalent.
  if (req == nullptr || req->tv_nsec < 0 || req->tv_nsec >= 1'000'000'000) return EINVAL;
  if ((flags & TIMER_ABSTIME) != 0) {
    rt->sleep_until(d::deadline_of(*rt, kind, *req), BUBBLE_CALLER(clock_nanosleep));
  } else {
    if (req->tv_sec < 0) return EINVAL;
    rt->sleep_for(d::to_duration(*req), BUBBLE_CALLER(clock_nanosleep));
    if (rem != nullptr) *rem = {};
  }
  return 0;
}

int usleep(useconds_t us) {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(usleep)(us);
  rt->sleep_for(std::chrono::microseconds{us}, BUBBLE_CALLER(usleep));
  return 0;
}

unsigned int sleep(unsigned int seconds) {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(sleep)(seconds);
  rt->sleep_for(std::chrono::seconds{seconds}, BUBBLE_CALLER(sleep));
  return 0;
}

int sched_yield() noexcept {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr || !d::on_bubble_thread()) [[likely]] {
    int (*real)() = real_sched_yield.load(std::memory_order_relaxed);
    return real != nullptr ? real() : BUBBLE_REAL(sched_yield)();  // Called before constructors.
  }
  try {
    rt->yield(BUBBLE_CALLER(sched_yield));
  } catch (...) {
    // A noexcept function: bubble::Unwind (the teardown of a failed run) cannot leave it. The
    // thread's next blocking call receives the next one.
  }
  return 0;
}

}  // extern "C"
