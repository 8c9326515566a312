#pragma once

#include <cstdint>

#include <bubble/random.hpp>

namespace bubble::detail {

// The random source of the calling bubble thread (or of the bubble's timer callbacks, when one
// is running); nullptr when the calling OS thread is not running a bubble. Defined in
// engine/api.cpp.
Random* bubble_random() noexcept;

// The key of a stream derived from a parent stream's key and the child's number (1, 2, ...):
// splitmix64's finalizer over both, so that nearby keys give unrelated streams.
inline std::uint64_t derive_random_key(std::uint64_t parent, std::uint64_t child) noexcept {
  auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  return mix(parent ^ mix(child + 0x9e3779b97f4a7c15ULL));
}

}  // namespace bubble::detail
