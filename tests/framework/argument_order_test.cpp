// Compile-time tests of the argument order rule: a runtime argument comes last (before a
// trailing SourceLocation) and defaults to current_runtime(). The old runtime-first order of
// Thread must not compile, so a caller written against it fails to build instead of silently
// meaning something else.
#include <functional>
#include <string>
#include <type_traits>

#include <bubble/context.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

namespace {

using bubble::Runtime;
using bubble::SourceLocation;
using bubble::Thread;
using Body = std::function<void()>;

// The runtime last, with or without a source location; or left to its default.
static_assert(std::is_constructible_v<Thread, std::string, Body, Runtime&>);
static_assert(std::is_constructible_v<Thread, std::string, Body, Runtime&, SourceLocation>);
static_assert(std::is_constructible_v<Thread, std::string, Body>);
// The runtime first is the old order: it no longer compiles.
static_assert(!std::is_constructible_v<Thread, Runtime&, std::string, Body>);
static_assert(!std::is_constructible_v<Thread, Runtime&, const char*, Body>);

// The two "run later" functions have one name each, and each returns its own handle.
static_assert(
    std::is_same_v<decltype(bubble::after_func(bubble::Duration{}, Body{})), bubble::AfterFunc>);
static_assert(std::is_same_v<decltype(bubble::after_done(bubble::Context::background(), Body{})),
                             bubble::AfterDone>);

}  // namespace
