#include <bubble/time.hpp>

#include <bubble/runtime.hpp>

#include <cstdio>
#include <ostream>
#include <string>

namespace bubble {

Clock::time_point Clock::now() noexcept {
  return current_runtime().now();
}

std::string format_wall_time(WallTime t) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<Duration> hms{t - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<long long>(hms.hours().count()),
                static_cast<long long>(hms.minutes().count()),
                static_cast<long long>(hms.seconds().count()));
  std::string out = buf;
  long long frac = hms.subseconds().count();
  if (frac != 0) {
    int digits = 9;
    while (frac % 10 == 0) {
      frac /= 10;
      --digits;
    }
    std::snprintf(buf, sizeof buf, ".%0*lld", digits, frac);
    out += buf;
  }
  out += 'Z';
  return out;
}

std::string format_duration(Duration d) {
  using namespace std::chrono;
  if (d == Duration::zero()) return "0s";
  std::string sign;
  // Work in unsigned magnitude so that Duration::min() is printed, not overflowed.
  unsigned long long ns = static_cast<unsigned long long>(d.count());
  if (d < Duration::zero()) {
    sign = "-";
    ns = 0ULL - ns;
  }
  char buf[96];
  constexpr unsigned long long kSecond = 1'000'000'000ULL;
  if (ns < 1000ULL) {
    std::snprintf(buf, sizeof buf, "%lluns", ns);
  } else if (ns < 1'000'000ULL) {
    std::snprintf(buf, sizeof buf, "%gus", static_cast<double>(ns) / 1e3);
  } else if (ns < kSecond) {
    std::snprintf(buf, sizeof buf, "%gms", static_cast<double>(ns) / 1e6);
  } else if (ns < 60 * kSecond) {
    std::snprintf(buf, sizeof buf, "%.9gs", static_cast<double>(ns) / 1e9);
  } else {
    const unsigned long long h = ns / (3600 * kSecond);
    const unsigned long long m = ns / (60 * kSecond) % 60;
    const double s = static_cast<double>(ns % (60 * kSecond)) / 1e9;
    if (h > 0) {
      std::snprintf(buf, sizeof buf, "%lluh%llum%.9gs", h, m, s);
    } else {
      std::snprintf(buf, sizeof buf, "%llum%.9gs", m, s);
    }
  }
  return sign + buf;
}

std::string format_time(TimePoint t) {
  if (t == kNoDeadline) return "no deadline";
  // A time point less than half-way from the origin to kStart (before about 1985 as a bubble's
  // time) belongs to a clock that counts from another origin: the steady clock counts from boot.
  const Duration since_origin = t.time_since_epoch();
  if (since_origin < kStart.time_since_epoch() / 2) {
    return format_duration(since_origin) + " since the clock's origin";
  }
  const Duration d = t - kStart;
  return (d < Duration::zero() ? "" : "+") + format_duration(d) + " since start";
}

void PrintTo(TimePoint t, std::ostream* os) {
  *os << format_time(t);
}

}  // namespace bubble
