#include "real.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace bubble::interpose::detail {

void* resolve_next(const char* name, const char* interceptor_name) noexcept {
  if (void* p = dlsym(RTLD_DEFAULT, interceptor_name)) return p;
  if (void* p = dlsym(RTLD_NEXT, name)) return p;
  std::fprintf(stderr, "bubble::interpose: cannot find the real %s\n", name);
  std::abort();
}

}  // namespace bubble::interpose::detail
