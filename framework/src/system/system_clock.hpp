#pragma once

// The system runtime's monotonic clock: a calibrated cycle counter where the processor's is
// invariant, std::chrono::steady_clock otherwise. Private to framework/src.
//
// Why. A steady_clock read is a call into the vDSO (a sequence-counter read of the kernel's
// clock parameters, a serialising counter read and the kernel's own bookkeeping), as much as the
// rest of TokenBucket::allow on a virtual machine (limiter_bench's BM_Reference_* rows). Reading
// the time-stamp counter and scaling it takes a few nanoseconds, as absl's CycleClock and seastar's
// clocks do.
//
// How. now() = base_ns + (tsc - base_tsc) * ns_per_tick, with the three parameters published
// through a sequence lock. Every kRefresh of clock time, one reader (whichever gets the refresh
// lock) re-reads steady_clock and republishes: the new line starts where the old one is at that
// instant (so time never steps back), and its slope is the rate measured over the whole life of
// the process plus the correction that closes the gap to steady_clock by the next refresh. A gap
// larger than kMaxLag (a paused virtual machine) is closed at once, forward only. The refresher
// reads the counter for the new line's origin only after it has made the sequence odd, so a
// reader that validated the old parameters read its counter before that point.
//
// Monotonic. Readers use a bare counter read (as absl's CycleClock), which the processor may
// execute a little out of program order; an ordered read (lfence; rdtsc) costs about twice as much
// (limiter_bench). So each thread keeps its latest reading and never returns less: on one
// thread the clock never decreases. Across threads a reading taken after seeing another thread's
// reading (through any synchronisation) may be earlier than it by at most the processor's
// out-of-order window (tens of nanoseconds), as with absl's clock.
//
// Bound. Measured at a refresh, the clock is behind steady_clock by at most kMaxLag (a larger gap
// is closed at once); the slope then differs from the measured rate by at most 1%, which closes
// a gap of kMaxLag within one refresh. Between refreshes the clock drifts from steady_clock only
// by the error of the measured rate (at start-up, measured over 200 us: some hundred parts per
// million, about a microsecond per refresh; less and less as the process lives). A refresh
// happens on the first read past kRefresh, so a clock that was not read for a long time is
// corrected by the read that notices.
//
// When. The counter is used only when /proc/cpuinfo lists both `constant_tsc` (it ticks at a
// fixed rate whatever the frequency) and `nonstop_tsc` (it ticks in every sleep state) and the
// kernel itself keeps time with it (its current clocksource is `tsc`, which it chooses only after
// checking that every processor's counter agrees). Otherwise every read is steady_clock's.

#include <atomic>
#include <cstdint>

#include <bubble/time.hpp>

namespace bubble::detail {

class SystemClock {
 public:
  // The clock is refreshed against steady_clock about this often, by a reader.
  static constexpr Duration kRefresh = std::chrono::milliseconds(10);
  // At a refresh, a gap to steady_clock larger than this is closed at once (forward only).
  static constexpr Duration kMaxLag = std::chrono::microseconds(100);

  // The current time, on steady_clock's origin. Never decreases. Never blocks.
  static TimePoint now() noexcept;

  // True when now() reads the cycle counter; false when it reads steady_clock.
  static bool uses_cycle_counter() noexcept;

  // The published parameters and the refresher's records (system/system_clock.cpp).
  struct State;

 private:
  static TimePoint read() noexcept;  // now() before the per-thread monotonic floor.
  static TimePoint refresh(State& s) noexcept;
  static TimePoint read_steady() noexcept;
};

}  // namespace bubble::detail
