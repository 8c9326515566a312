#pragma once

#include <cstdint>
#include <limits>

namespace bubble {

// Random is a seeded source of random 64-bit numbers: xoshiro256** (Blackman and Vigna,
// "Scrambled linear pseudorandom number generators", 2018), its state filled from the seed by
// splitmix64, as its authors recommend. The same seed gives the same sequence on every platform
// and compiler. It satisfies std::uniform_random_bit_generator, so it works with <random>'s
// distributions and std::shuffle; but those distributions are implementation-defined (libstdc++
// and libc++ map the same numbers to different values), so where values must be the same
// everywhere, use below() and canonical(), which are specified here.
//
// Not a cryptographic generator. Not thread-safe: one object per thread (see random()).
class Random {
 public:
  using result_type = std::uint64_t;

  // A generator whose sequence is determined by `seed`.
  explicit Random(std::uint64_t seed) noexcept;

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

  // The next number of the sequence, uniform over [min(), max()].
  result_type operator()() noexcept {
    // xoshiro256** 1.0 (Blackman and Vigna), inline: the bubble's random strategy draws one per
    // scheduling decision.
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // A number uniform in [0, n), without bias (Lemire's multiply-and-reject method). n == 0 throws
  // std::invalid_argument.
  std::uint64_t below(std::uint64_t n);

  // A double uniform in [0, 1), on the grid of multiples of 2^-53.
  double canonical() noexcept;

  friend bool operator==(const Random&, const Random&) = default;

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// The calling thread's random source, on the calling thread's runtime (current_runtime()):
//
// - In a bubble, every bubble thread has its own stream, derived from Options::random_seed and
//   the thread's place in the tree of spawns (the root; the k-th thread spawned by the root; the
//   k-th thread spawned by that one; ...), not from its id. So a thread draws the same numbers
//   under every strategy and on every replay, whatever the interleaving, as long as its own code
//   and the numbers it draws stay the same. Timer callbacks share one stream of the bubble, and
//   threads spawned from timer callbacks (after_func) are numbered in the order the callbacks
//   run; that order is the same on replay, and can change between strategies only when several
//   timers are due at the same instant.
// - On the system runtime, each OS thread has its own generator, seeded from std::random_device
//   on its first call: no lock, and a different sequence in every run.
//
// The reference stays valid until the thread exits (a bubble thread: until its body returns).
// Drawing is not a scheduling point.
Random& random();

}  // namespace bubble
