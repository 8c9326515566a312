#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>

namespace bubble {

// Thread is a named thread of a runtime (Runtime::spawn) that joins on destruction, like
// std::jthread without a stop token: on the system runtime a real thread, in a bubble a bubble
// thread. Prefer it to raw ThreadHandles.
//
// An exception escaping the body is a failure of the runtime: the system runtime calls
// std::terminate (after printing the thread's name and the exception), a bubble fails the run.
// The body may be any callable taking no arguments, including move-only ones.
//
// Unlike a ThreadHandle, which detaches its thread when dropped, a Thread always joins: an unnamed
// temporary (`Thread("t", fn);`) would start the thread and join it at the end of the statement,
// running it synchronously, so discarding one is a warning ([[nodiscard]] on the class, and on the
// constructor for GCC, which only diagnoses discarded temporaries of a [[nodiscard]] constructor).
//
// Thread safety: a Thread object is not itself thread-safe (like std::thread): use one object
// from one thread at a time. Move-only.
class [[nodiscard]] Thread {
 public:
  // An empty Thread: not joinable, name() is "".
  Thread() noexcept = default;

  // Starts a thread of `rt` named `name` that runs `fn()`. The runtime comes last, before the
  // source location, like every runtime argument in bubble.
  template <class F, class = std::enable_if_t<std::is_invocable_v<std::decay_t<F>&>>>
  [[nodiscard]] Thread(std::string name, F&& fn, Runtime& rt = current_runtime(),
                       SourceLocation where = SourceLocation::current())
      : name_(name), handle_(rt.spawn(std::move(name), make_body(std::forward<F>(fn)), where)) {}

  Thread(Thread&& other) noexcept = default;

  // Joins the thread this object runs, if joinable, then takes over `other`'s thread.
  // NOLINTNEXTLINE(performance-noexcept-move-constructor): the join may throw.
  Thread& operator=(Thread&& other) {
    if (this != &other) {
      if (joinable()) join();
      name_ = std::move(other.name_);
      handle_ = std::move(other.handle_);
    }
    return *this;
  }

  // Joins the thread if it is joinable. An exception thrown by join (joining itself) terminates.
  ~Thread() {
    if (joinable()) join();
  }

  // True while the object owns a thread that has not been joined.
  bool joinable() const noexcept { return handle_ != nullptr; }

  // Blocks until the thread has returned from its body. Throws std::logic_error if the object is
  // not joinable (never started, moved from, or already joined), or if called from the thread
  // itself.
  void join(SourceLocation where = SourceLocation::current());

  // The name given at construction ("" for an empty Thread); kept after join.
  const std::string& name() const noexcept { return name_; }

 private:
  template <class F>
  static std::function<void()> make_body(F&& fn) {
    using Fn = std::decay_t<F>;
    if constexpr (std::is_copy_constructible_v<Fn>) {
      return std::function<void()>(std::forward<F>(fn));
    } else {
      // std::function needs a copyable target: keep a move-only callable behind a shared_ptr.
      auto held = std::make_shared<Fn>(std::forward<F>(fn));
      return [held] { (*held)(); };
    }
  }

  std::string name_;
  std::unique_ptr<ThreadHandle> handle_;
};

}  // namespace bubble
