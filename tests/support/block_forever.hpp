#pragma once

// A thread that never wakes: parks on an object that nobody signals, for tests of the reports a
// bubble prints when its threads are stuck.

#include <cstdint>

#include <bubble/runtime.hpp>

namespace bubble::test_support {

// Parks the calling bubble thread forever on `object_id`, as a primitive's wait named
// "Forever::wait" at `where` would. Returns only if the run ends by unwinding the thread.
inline void block_forever(Runtime& rt, std::uint64_t object_id,
                          SourceLocation where = SourceLocation::current()) {
  Waiter w;
  rt.prepare(w);
  rt.park(w, kNoDeadline, {"Forever::wait", object_id, where});
}

}  // namespace bubble::test_support
