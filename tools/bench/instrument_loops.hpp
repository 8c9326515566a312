#pragma once

// The loops instrument_bench measures, compiled twice: with bubble::instrument (namespace
// bench::instrumented, instrument_bench.cpp) and without (bench::baseline,
// instrument_baseline.cpp). Each runs `n` operations and returns a value that depends on them.

#include <atomic>
#include <cstdint>

namespace bench {
namespace baseline {
std::uint64_t atomic_loads(std::atomic<std::uint64_t>& a, std::uint64_t n);
std::uint64_t atomic_fetch_adds(std::atomic<std::uint64_t>& a, std::uint64_t n);
std::uint64_t atomic_stores(std::atomic<std::uint64_t>& a, std::uint64_t n);
std::uint64_t plain_accesses(volatile std::uint64_t* cells, std::uint64_t n);
}  // namespace baseline
namespace instrumented {
std::uint64_t atomic_loads(std::atomic<std::uint64_t>& a, std::uint64_t n);
std::uint64_t atomic_fetch_adds(std::atomic<std::uint64_t>& a, std::uint64_t n);
std::uint64_t atomic_stores(std::atomic<std::uint64_t>& a, std::uint64_t n);
std::uint64_t plain_accesses(volatile std::uint64_t* cells, std::uint64_t n);
}  // namespace instrumented
}  // namespace bench
