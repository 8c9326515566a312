#pragma once

// Not part of the API: readable C++ type names for failure messages.

#include <cxxabi.h>

#include <cstdlib>
#include <string>

namespace bubble::detail {

// The demangled form of a type name from std::type_info::name() ("std::out_of_range"), or `name`
// itself when it cannot be demangled.
inline std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (d == nullptr) return name;
  std::string out = d;
  std::free(d);
  return out;
}

}  // namespace bubble::detail
