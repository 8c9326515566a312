#include <bubble/random.hpp>

#include <random>
#include <stdexcept>

#include "engine/random_key.hpp"

namespace bubble {
namespace {

__extension__ typedef unsigned __int128 Uint128;  // GCC and Clang; -Wpedantic accepts this form.

}  // namespace

Random::Random(std::uint64_t seed) noexcept : s_{} {
  // splitmix64 (Steele, Lea and Flood; Vigna's public-domain code), one output per state word.
  for (std::uint64_t& s : s_) {
    seed += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    s = z ^ (z >> 31);
  }
}

std::uint64_t Random::below(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("bubble::Random::below: n must be > 0, got 0");
  // Lemire, "Fast random integer generation in an interval" (2019): the high word of x * n is
  // uniform once the low words below 2^64 mod n are rejected.
  Uint128 m = static_cast<Uint128>((*this)()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<Uint128>((*this)()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Random::canonical() noexcept {
  return static_cast<double>((*this)() >> 11) * 0x1.0p-53;
}

Random& random() {
  if (Random* r = detail::bubble_random()) return *r;
  thread_local Random system = [] {
    std::random_device device;
    const std::uint64_t seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    return Random(seed);
  }();
  return system;
}

}  // namespace bubble
