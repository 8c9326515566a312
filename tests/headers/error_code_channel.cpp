// Compiled by the ctest entries headers.error_code_channel_* (tests/headers/CMakeLists.txt),
// never linked: a Channel of std::error_code (or of an error code enum) must be refused where it
// is declared, with one message that says why, instead of deep in select's templates. With no
// macro defined, a channel of a struct that wraps the code compiles (the control).
#include <bubble/channel.hpp>
#include <bubble/select.hpp>

#include <system_error>

struct WrappedCode {
  std::error_code code;
};

void declares_channels(bubble::Runtime& rt) {
  bubble::Channel<WrappedCode> wrapped(1, rt);
  (void)bubble::select(bubble::recv(wrapped), bubble::default_case()).index();
#if defined(BUBBLE_ERROR_CODE_CHANNEL)
  bubble::Channel<std::error_code> codes(1, rt);
#endif
#if defined(BUBBLE_ERROR_ENUM_CHANNEL)
  bubble::Channel<bubble::errc> codes(1, rt);
#endif
}
