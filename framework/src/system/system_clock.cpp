// The system runtime's clock: see system/system_clock.hpp.

#include "system/system_clock.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BUBBLE_HAVE_TSC 1
#else
#define BUBBLE_HAVE_TSC 0
#endif

namespace bubble::detail {
namespace {

// A bare counter read, as absl's CycleClock: the processor may execute it a little earlier or
// later than its place in the program (its out-of-order window, tens of nanoseconds). Ordering it
// (lfence first, as Linux's rdtsc_ordered) doubles its cost (limiter_bench's BM_Reference_*
// rows), so readers use this one and the clock keeps each thread's readings monotonic itself.
inline std::uint64_t read_tsc() noexcept {
#if BUBBLE_HAVE_TSC
  return __rdtsc();
#else
  return 0;
#endif
}

// A counter read that does not run ahead of the instructions before it: the refresher's.
inline std::uint64_t read_tsc_ordered() noexcept {
#if BUBBLE_HAVE_TSC
  _mm_lfence();
  return __rdtsc();
#else
  return 0;
#endif
}

// A counter value and a steady_clock reading (ns) taken at the same moment.
struct Sample {
  std::uint64_t tsc;
  std::int64_t ns;
};

// The steady_clock read bracketed by two ordered counter reads, eight times, keeping the
// tightest bracket (its midpoint is the pair's counter value): a preemption between the reads
// would otherwise skew the rate or the gap by a scheduler time slice.
Sample sample() noexcept {
  Sample best{0, 0};
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t before = read_tsc_ordered();
    const std::int64_t ns =
        std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    const std::uint64_t after = read_tsc_ordered();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// The latest reading this thread has returned: no thread sees its clock go back, whatever order
// its processor executed the counter reads in.
thread_local std::int64_t tl_last_reading = 0;

// Whether the kernel and the processor vouch for an invariant, synchronised counter.
bool cycle_counter_usable() {
#if BUBBLE_HAVE_TSC
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line + " ";
      break;
    }
  }
  if (flags.find(" constant_tsc ") == std::string::npos ||
      flags.find(" nonstop_tsc ") == std::string::npos) {
    return false;
  }
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  source >> name;
  return name == "tsc";
#else
  return false;
#endif
}

// 128-bit intermediates of the fixed-point arithmetic (a GCC and Clang extension).
__extension__ typedef unsigned __int128 U128;
__extension__ typedef __int128 I128;

// Scaling: nanoseconds per tick in 32.32 fixed point.
constexpr int kShift = 32;

std::int64_t scale(std::uint64_t ticks, std::uint64_t mult) noexcept {
  return static_cast<std::int64_t>((static_cast<U128>(ticks) * mult) >> kShift);
}

// Scales `tsc` on a line; a counter value before the line's origin (read on a processor whose
// reads ran ahead of the refresher's) counts as the origin.
std::int64_t on_line(std::uint64_t tsc, std::uint64_t base_tsc, std::int64_t base_ns,
                     std::uint64_t mult) noexcept {
  return tsc > base_tsc ? base_ns + scale(tsc - base_tsc, mult) : base_ns;
}

}  // namespace

// The sequence lock is written without fences (ThreadSanitizer does not model them): readers load
// the parameters with acquire (free on x86), so the re-check of `seq` cannot move before them;
// the refresher opens the section with a sequentially consistent exchange and stores the
// parameters with release, so none of them is visible before the odd sequence.
struct SystemClock::State {
  // Published through `seq` (odd while the refresher writes). mult == 0: not calibrated yet, or
  // the counter is not usable (then `steady_only`).
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint64_t> base_tsc{0};
  std::atomic<std::int64_t> base_ns{0};
  std::atomic<std::uint64_t> mult{0};
  std::atomic<std::uint64_t> refresh_ticks{0};  // Ticks between refreshes.
  std::atomic<bool> steady_only{false};

  // Only under refresh_lock.
  std::mutex refresh_lock;
  bool calibrated = false;
  std::uint64_t origin_tsc = 0;  // The first calibration point, for the long-run rate.
  std::int64_t origin_ns = 0;
};

TimePoint SystemClock::read_steady() noexcept {
  return TimePoint(
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch()));
}

namespace {
SystemClock::State& clock_state() noexcept {
  static constinit SystemClock::State s;
  return s;
}
}  // namespace

TimePoint SystemClock::now() noexcept {
  std::int64_t t = read().time_since_epoch().count();
  if (t < tl_last_reading) t = tl_last_reading;
  tl_last_reading = t;
  return TimePoint(Duration(t));
}

TimePoint SystemClock::read() noexcept {
  State& s = clock_state();
  // Where the counter is not usable (a kernel that marks it unstable), every read is
  // steady_clock's, without a counter read first, which would be wasted.
  if (s.steady_only.load(std::memory_order_relaxed)) return read_steady();
  for (;;) {
    const std::uint32_t seq = s.seq.load(std::memory_order_acquire);
    const std::uint64_t base_tsc = s.base_tsc.load(std::memory_order_acquire);
    const std::int64_t base_ns = s.base_ns.load(std::memory_order_acquire);
    const std::uint64_t mult = s.mult.load(std::memory_order_acquire);
    const std::uint64_t limit = s.refresh_ticks.load(std::memory_order_acquire);
    const std::uint64_t tsc = read_tsc();
    if ((seq & 1) != 0 || s.seq.load(std::memory_order_relaxed) != seq) continue;
    if (mult == 0) {
      if (s.steady_only.load(std::memory_order_relaxed)) return read_steady();
      return refresh(s);
    }
    if (tsc - base_tsc > limit && tsc > base_tsc) return refresh(s);
    return TimePoint(Duration(on_line(tsc, base_tsc, base_ns, mult)));
  }
}

bool SystemClock::uses_cycle_counter() noexcept {
  (void)now();  // Calibrates on first use.
  return !clock_state().steady_only.load(std::memory_order_relaxed);
}

TimePoint SystemClock::refresh(State& s) noexcept {
  std::unique_lock lock(s.refresh_lock, std::try_to_lock);
  if (!lock.owns_lock()) {
    // Another reader is refreshing. Before the first calibration there is nothing to scale with:
    // wait for it; afterwards the published line is still good (a little past its refresh).
    if (s.mult.load(std::memory_order_acquire) == 0) {
      lock.lock();
      lock.unlock();
      return s.steady_only.load(std::memory_order_relaxed) ? read_steady() : read();
    }
    for (;;) {
      const std::uint32_t seq = s.seq.load(std::memory_order_acquire);
      const std::uint64_t base_tsc = s.base_tsc.load(std::memory_order_acquire);
      const std::int64_t base_ns = s.base_ns.load(std::memory_order_acquire);
      const std::uint64_t mult = s.mult.load(std::memory_order_acquire);
      const std::uint64_t tsc = read_tsc();
      if ((seq & 1) != 0 || s.seq.load(std::memory_order_relaxed) != seq) continue;
      if (mult == 0) return read_steady();
      return TimePoint(Duration(on_line(tsc, base_tsc, base_ns, mult)));
    }
  }
  if (s.steady_only.load(std::memory_order_relaxed)) return read_steady();

  if (!s.calibrated) {
    if (!cycle_counter_usable()) {
      s.steady_only.store(true, std::memory_order_relaxed);
      s.calibrated = true;
      return read_steady();
    }
    // A first rate from a short busy interval (about 200 us of steady_clock); refreshes refine
    // it over the life of the process.
    const Sample first = sample();
    const std::uint64_t t0 = first.tsc;
    const std::int64_t n0 = first.ns;
    while (read_steady().time_since_epoch().count() - n0 < 200'000) {
    }
    Sample last = sample();
    while (last.tsc <= t0) last = sample();
    const std::uint64_t t1 = last.tsc;
    const std::int64_t n1 = last.ns;
    const std::uint64_t mult =
        static_cast<std::uint64_t>((static_cast<U128>(n1 - n0) << kShift) / (t1 - t0));
    s.origin_tsc = t0;
    s.origin_ns = n0;
    s.calibrated = true;
    const auto refresh_ticks = static_cast<std::uint64_t>(
        (static_cast<U128>(kRefresh.count()) << kShift) / (mult == 0 ? 1 : mult));
    const std::uint32_t seq = s.seq.load(std::memory_order_relaxed);
    s.seq.exchange(seq + 1, std::memory_order_seq_cst);  // Also a full barrier.
    const Sample origin = sample();
    const std::uint64_t base_tsc = origin.tsc;
    const std::int64_t base_ns = origin.ns;
    s.base_tsc.store(base_tsc, std::memory_order_release);
    s.base_ns.store(base_ns, std::memory_order_release);
    s.refresh_ticks.store(refresh_ticks, std::memory_order_release);
    s.mult.store(mult == 0 ? 1 : mult, std::memory_order_release);
    s.seq.store(seq + 2, std::memory_order_release);
    return TimePoint(Duration(base_ns));
  }

  // Open the write section before reading the counter for the new line's origin: a reader that
  // validates the old parameters read its counter before this point (see the header).
  const std::uint32_t seq = s.seq.load(std::memory_order_relaxed);
  s.seq.exchange(seq + 1, std::memory_order_seq_cst);  // Also a full barrier.
  const Sample now_sample = sample();
  const std::uint64_t tsc = now_sample.tsc;
  const std::int64_t steady = now_sample.ns;
  const std::uint64_t old_mult = s.mult.load(std::memory_order_relaxed);
  const std::int64_t here = on_line(tsc, s.base_tsc.load(std::memory_order_relaxed),
                                    s.base_ns.load(std::memory_order_relaxed), old_mult);
  // The rate over the whole life of the process, then the slope that closes the gap by the next
  // refresh, within 1% of the rate (when ahead, time runs 1% slow; it never stops).
  const std::uint64_t rate = static_cast<std::uint64_t>(
      (static_cast<U128>(steady - s.origin_ns) << kShift) / (tsc - s.origin_tsc));
  // The new line starts kMargin above the old one: a reader's counter read is not ordered
  // before its re-check of the sequence, so it may combine the old parameters with a counter
  // value a few dozen nanoseconds past the new origin; slopes within 1% differ by less than
  // kMargin over the first 100 ns.
  constexpr std::int64_t kMargin = 1;
  std::int64_t base = here + kMargin;
  const std::int64_t gap = steady - here;  // > 0: the clock is behind steady_clock.
  std::uint64_t mult = rate;
  if (gap > kMaxLag.count()) {
    base = steady;  // Forward only: every value read so far is <= here < steady.
  } else {
    const auto period_ticks = static_cast<std::int64_t>(
        (static_cast<U128>(kRefresh.count()) << kShift) / (rate == 0 ? 1 : rate));
    const auto limit = static_cast<std::int64_t>(rate / 100);
    const std::int64_t correction =
        std::clamp(static_cast<std::int64_t>((static_cast<I128>(gap) << kShift) /
                                             std::max<std::int64_t>(period_ticks, 1)),
                   -limit, limit);
    mult = static_cast<std::uint64_t>(static_cast<std::int64_t>(rate) + correction);
  }
  if (mult == 0) mult = 1;
  s.base_tsc.store(tsc, std::memory_order_release);
  s.base_ns.store(base, std::memory_order_release);
  s.mult.store(mult, std::memory_order_release);
  s.refresh_ticks.store(
      static_cast<std::uint64_t>((static_cast<U128>(kRefresh.count()) << kShift) / rate),
      std::memory_order_release);
  s.seq.store(seq + 2, std::memory_order_release);
  return TimePoint(Duration(base));
}

}  // namespace bubble::detail
