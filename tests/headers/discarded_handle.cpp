// Compiled by the ctest entries headers.discarded_* (tests/headers/CMakeLists.txt), never linked:
// discarding a thread handle must be a warning. With no macro defined every handle is kept and
// the file compiles without a warning (the control, proving the include paths and flags work);
// each macro adds one statement that drops a handle, which the compiler must reject under
// -Werror, naming [[nodiscard]].
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>

void keeps_every_handle(bubble::Runtime& rt) {
  auto handle = rt.spawn("kept", [] {});
  handle->join();
  bubble::detach(rt.spawn("detached", [] {}));
  bubble::Thread thread(
      "joined", [] {}, rt);
#if defined(BUBBLE_DISCARD_SPAWN)
  rt.spawn("dropped", [] {});  // Detaches silently: must warn.
#endif
#if defined(BUBBLE_DISCARD_THREAD)
  bubble::Thread(
      "dropped", [] {}, rt);  // Runs and joins within the statement: must warn.
#endif
}
