#include <bubble/pool/latency_histogram.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace bubble {
namespace {

constexpr std::int64_t kPow10[] = {1,
                                   10,
                                   100,
                                   1'000,
                                   10'000,
                                   100'000,
                                   1'000'000,
                                   10'000'000,
                                   100'000'000,
                                   1'000'000'000,
                                   10'000'000'000,
                                   100'000'000'000,
                                   1'000'000'000'000,
                                   10'000'000'000'000,
                                   100'000'000'000'000,
                                   1'000'000'000'000'000,
                                   10'000'000'000'000'000,
                                   100'000'000'000'000'000,
                                   1'000'000'000'000'000'000};

// The rank (1-based) of the q-quantile among `count` values: ceil(q * count), at least 1.
std::uint64_t rank_of(double q, std::uint64_t count) {
  const double r = std::ceil(q * static_cast<double>(count));
  if (r < 1.0) return 1;
  if (r >= static_cast<double>(count)) return count;
  return static_cast<std::uint64_t>(r);
}

void check_quantile(double q) {
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("bubble::LatencyHistogram::quantile: q must be in [0, 1], got " +
                                std::to_string(q));
  }
}

}  // namespace

LatencyHistogram::LatencyHistogram(const LatencyHistogram& other) {
  *this = other;
}

LatencyHistogram& LatencyHistogram::operator=(const LatencyHistogram& other) {
  if (this == &other) return *this;
  for (int g = 0; g < kGroups; ++g) {
    if (other.groups_[g] == nullptr) {
      if (groups_[g] != nullptr) std::fill_n(groups_[g].get(), group_size(g), 0);
      continue;
    }
    if (groups_[g] == nullptr) groups_[g] = std::make_unique<std::uint64_t[]>(group_size(g));
    std::copy_n(other.groups_[g].get(), group_size(g), groups_[g].get());
  }
  count_ = other.count_;
  min_ = other.min_;
  max_ = other.max_;
  sum_ = other.sum_;
  return *this;
}

void LatencyHistogram::locate(std::int64_t v, int& group, int& index) noexcept {
  if (v < kGroup0Size) {
    group = 0;
    index = static_cast<int>(v);
    return;
  }
  int digits = 4;
  while (digits < 19 && v >= kPow10[digits]) ++digits;
  group = digits - 3;
  index = static_cast<int>(v / kPow10[group]) - 100;
}

std::int64_t LatencyHistogram::lower_bound(int group, int index) noexcept {
  if (group == 0) return index;
  return (static_cast<std::int64_t>(index) + 100) * kPow10[group];
}

Duration LatencyHistogram::kept_value(Duration d) noexcept {
  const std::int64_t v = std::max<std::int64_t>(d.count(), 0);
  int group = 0;
  int index = 0;
  locate(v, group, index);
  return Duration{lower_bound(group, index)};
}

void LatencyHistogram::add(int group, int index, std::uint64_t n) {
  auto& buckets = groups_[group];
  if (buckets == nullptr) buckets = std::make_unique<std::uint64_t[]>(group_size(group));
  buckets[index] += n;
}

void LatencyHistogram::record(Duration d) {
  const std::int64_t v = std::max<std::int64_t>(d.count(), 0);
  int group = 0;
  int index = 0;
  locate(v, group, index);
  add(group, index, 1);
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  ++count_;
  sum_ += static_cast<Sum>(v);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (int g = 0; g < kGroups; ++g) {
    if (other.groups_[g] == nullptr) continue;
    for (int i = 0; i < group_size(g); ++i) {
      if (other.groups_[g][i] != 0) add(g, i, other.groups_[g][i]);
    }
  }
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

void LatencyHistogram::clear() noexcept {
  for (int g = 0; g < kGroups; ++g) {
    if (groups_[g] != nullptr) std::fill_n(groups_[g].get(), group_size(g), 0);
  }
  count_ = 0;
  min_ = max_ = 0;
  sum_ = 0;
}

Duration LatencyHistogram::mean() const noexcept {
  if (count_ == 0) return Duration{};
  return Duration{static_cast<std::int64_t>(sum_ / count_)};
}

Duration LatencyHistogram::quantile(double q) const {
  check_quantile(q);
  if (count_ == 0) return Duration{};
  const std::uint64_t rank = rank_of(q, count_);
  if (rank == count_) return max();
  std::uint64_t seen = 0;
  for (int g = 0; g < kGroups; ++g) {
    if (groups_[g] == nullptr) continue;
    for (int i = 0; i < group_size(g); ++i) {
      seen += groups_[g][i];
      if (seen >= rank) return Duration{std::clamp(lower_bound(g, i), min_, max_)};
    }
  }
  return max();
}

LatencySummary LatencyHistogram::summary() const {
  LatencySummary s;
  s.count = count_;
  if (count_ == 0) return s;
  s.min = min();
  s.max = max();
  s.mean = mean();
  const double qs[3] = {0.50, 0.90, 0.99};
  Duration* outs[3] = {&s.p50, &s.p90, &s.p99};
  std::uint64_t ranks[3];
  for (int k = 0; k < 3; ++k) {
    ranks[k] = rank_of(qs[k], count_);
    *outs[k] = max();
  }
  int next = 0;
  while (next < 3 && ranks[next] == count_) ++next;  // Those are max(), already set.
  std::uint64_t seen = 0;
  for (int g = 0; g < kGroups && next < 3; ++g) {
    if (groups_[g] == nullptr) continue;
    for (int i = 0; i < group_size(g) && next < 3; ++i) {
      seen += groups_[g][i];
      while (next < 3 && seen >= ranks[next]) {
        if (ranks[next] != count_) {
          *outs[next] = Duration{std::clamp(lower_bound(g, i), min_, max_)};
        }
        ++next;
      }
    }
  }
  return s;
}

}  // namespace bubble
