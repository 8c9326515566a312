#pragma once

#include <bubble/call_stack.hpp>

namespace bubble::testing {

// A StackSymbolizer (Options::symbolize_stacks) on GCC's libbacktrace, which reads the
// executable's DWARF debug information: each address becomes its frames, the functions inlined at
// it first (innermost first), then the function containing it, each with its demangled name and,
// when the code was compiled with debug information (-g), its source file and line. Inlined frames
// matter: in an optimised build a user's lambda is often inlined into std::function's invoker, and
// only the inlined frame names the user's line. Without debug information a frame has the
// function's name from the symbol table and no file, so no frame counts as the user's code and
// reports keep the blocking call's own location. Safe to call from any thread.
StackSymbolizer stack_symbolizer();

}  // namespace bubble::testing
