#pragma once

// Short spelling of bubble's error codes for test expectations.

#include <system_error>

#include <bubble/errc.hpp>

namespace bubble::test_support {

// The std::error_code of `e` in bubble's category: what the primitives return.
inline std::error_code ec(errc e) {
  return make_error_code(e);
}

}  // namespace bubble::test_support
