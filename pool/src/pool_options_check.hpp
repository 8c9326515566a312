#pragma once

// The check of a Pool's options. Private to bubble::pool.

#include <bubble/pool/options.hpp>

namespace bubble::detail {

// Throws std::invalid_argument naming the first field of `options` that is out of range and its
// value (see PoolOptions for the ranges).
void validate_pool_options(const PoolOptions& options);

}  // namespace bubble::detail
