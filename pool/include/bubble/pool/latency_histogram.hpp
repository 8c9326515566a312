#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include <bubble/time.hpp>

namespace bubble {

// LatencySummary is a snapshot of a LatencyHistogram: how many durations were recorded, their
// minimum, maximum and mean, and three quantiles. Every field is zero when nothing was recorded.
struct LatencySummary {
  std::uint64_t count = 0;
  Duration min{};
  Duration max{};
  Duration mean{};  // Exact (the sum is kept exactly), rounded towards zero.
  Duration p50{};
  Duration p90{};
  Duration p99{};

  friend bool operator==(const LatencySummary&, const LatencySummary&) = default;
};

// LatencyHistogram records durations (queue waits, service times) in fixed buckets and answers
// quantile queries, like a small HdrHistogram with decimal buckets.
//
// Precision. Durations are kept to three significant decimal digits: below 1 us every nanosecond
// value has its own bucket; above, a duration is rounded down to its first three decimal digits
// (12'345 ns is kept as 12'300 ns), so a reported quantile is at most 1% below the true value.
// Durations with at most three significant digits (10 ms, 250 us, 1.5 s) are kept exactly, which
// makes quantiles exact in virtual-time tests. Count, minimum, maximum and mean are always exact.
// Negative durations are recorded as zero.
//
// Quantiles use the nearest-rank definition: quantile(q) is the smallest recorded value v (as
// kept) such that at least ceil(q * count) of the recorded values are <= v, clamped to
// [min(), max()]; quantile(0) is min() and quantile(1) is max().
//
// Memory. Buckets are allocated lazily, one decade (900 counters, 7.2 KB) at a time, so a
// histogram that only sees durations between 1 ms and 1 s holds three decades.
//
// Cost. record() is a few comparisons, one division and one increment; quantile() walks the
// allocated buckets.
//
// Thread safety: none; guard a shared histogram with a lock.
class LatencyHistogram {
 public:
  LatencyHistogram() = default;
  LatencyHistogram(const LatencyHistogram& other);
  LatencyHistogram& operator=(const LatencyHistogram& other);
  LatencyHistogram(LatencyHistogram&&) noexcept = default;
  LatencyHistogram& operator=(LatencyHistogram&&) noexcept = default;
  ~LatencyHistogram() = default;

  // Records one duration. May allocate (a decade's buckets, the first time one is used); throws
  // std::bad_alloc if that fails.
  void record(Duration d);

  // Adds every value recorded in `other` to this histogram.
  void merge(const LatencyHistogram& other);

  // Forgets every recorded value (keeps the allocated buckets).
  void clear() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  // Zero when nothing was recorded.
  Duration min() const noexcept { return count_ == 0 ? Duration{} : Duration{min_}; }
  Duration max() const noexcept { return Duration{max_}; }
  Duration mean() const noexcept;

  // The q-quantile (see above) for 0 <= q <= 1; zero when nothing was recorded. Throws
  // std::invalid_argument naming q if it is outside [0, 1] or NaN.
  Duration quantile(double q) const;

  // count, min, max, mean, p50, p90 and p99 in one pass.
  LatencySummary summary() const;

  // The value a duration is kept as: `d` rounded down to three significant decimal digits (exact
  // below 1 us), zero for negative durations.
  static Duration kept_value(Duration d) noexcept;

 private:
  // Group 0: values 0..999 ns, one bucket each. Group g >= 1: values with g + 3 decimal digits,
  // 900 buckets for the leading three digits 100..999.
  static constexpr int kGroups = 17;
  static constexpr int kGroup0Size = 1000;
  static constexpr int kGroupSize = 900;

  static void locate(std::int64_t v, int& group, int& index) noexcept;
  static std::int64_t lower_bound(int group, int index) noexcept;
  static int group_size(int group) noexcept { return group == 0 ? kGroup0Size : kGroupSize; }
  void add(int group, int index, std::uint64_t n);

  std::array<std::unique_ptr<std::uint64_t[]>, kGroups> groups_{};
  std::uint64_t count_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  // The exact sum, as 128 bits, so that the mean never overflows.
  __extension__ typedef unsigned __int128 Sum;
  Sum sum_ = 0;
};

}  // namespace bubble
