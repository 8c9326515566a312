// Compile-time tests of the argument order rule for the pool and the limiters: the runtime comes
// last and defaults to current_runtime(); the old runtime-first order no longer compiles, so a
// caller written against it fails to build instead of converting its arguments.
#include <cstdint>
#include <type_traits>

#include <bubble/context.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/limiter/ticket_booth.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/time.hpp>

namespace {

using bubble::Context;
using bubble::Duration;
using bubble::Runtime;

static_assert(std::is_constructible_v<bubble::Pool, bubble::PoolOptions, Runtime&>);
static_assert(std::is_constructible_v<bubble::Pool, bubble::PoolOptions>);
static_assert(!std::is_constructible_v<bubble::Pool, Runtime&, bubble::PoolOptions>);

static_assert(std::is_constructible_v<bubble::TokenBucket, double, int, Runtime&>);
static_assert(std::is_constructible_v<bubble::TokenBucket, double, int>);
static_assert(!std::is_constructible_v<bubble::TokenBucket, Runtime&, double, int>);

static_assert(std::is_constructible_v<bubble::ConcurrencyLimiter, std::int64_t, Runtime&>);
static_assert(std::is_constructible_v<bubble::ConcurrencyLimiter, std::int64_t>);
static_assert(!std::is_constructible_v<bubble::ConcurrencyLimiter, Runtime&, std::int64_t>);

static_assert(
    std::is_constructible_v<bubble::TicketBooth, Duration, int, const Context&, Runtime&>);
static_assert(std::is_constructible_v<bubble::TicketBooth, Duration, int, Runtime&>);
static_assert(std::is_constructible_v<bubble::TicketBooth, Duration, int, const Context&>);
static_assert(std::is_constructible_v<bubble::TicketBooth, Duration, int>);
static_assert(!std::is_constructible_v<bubble::TicketBooth, Runtime&, Duration, int>);
static_assert(
    !std::is_constructible_v<bubble::TicketBooth, Runtime&, Duration, int, const Context&>);

}  // namespace
