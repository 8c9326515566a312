#include "engine/os_thread.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <system_error>

#include <bubble/detail/intercept.hpp>

#include "kernel/futex.hpp"

namespace bubble::detail {
namespace {

// The engine's own call into the C library, for the guard's lifetime: the interposer is off on
// this OS thread, and the thread's errno is what it was before (a futex wait that finds the turn
// already given sets EAGAIN; the bubble thread must not see that).
class EngineCall {
 public:
  EngineCall() noexcept : saved_runtime_(tl_intercepting_runtime), saved_errno_(errno) {
    tl_intercepting_runtime = nullptr;
  }
  ~EngineCall() {
    tl_intercepting_runtime = saved_runtime_;
    errno = saved_errno_;
  }
  EngineCall(const EngineCall&) = delete;
  EngineCall& operator=(const EngineCall&) = delete;

 private:
  Runtime* saved_runtime_;
  int saved_errno_;
};

}  // namespace

void Baton::wait() noexcept {
  const EngineCall call;
  for (;;) {
    std::uint32_t posted = 1;
    if (turn_.compare_exchange_strong(posted, 0, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return;
    }
    futex_wait(turn_, 0, nullptr);
  }
}

void Baton::post() noexcept {
  const EngineCall call;
  turn_.store(1, std::memory_order_release);
  futex_wake_one(turn_);
}

void hand_over(Baton& self, Baton& to) noexcept {
  to.post();
  self.wait();
}

pthread_t start_os_thread(std::size_t stack_size, void* (*entry)(void*), void* arg) {
  const EngineCall call;
  pthread_attr_t attr;
  if (const int err = pthread_attr_init(&attr); err != 0) {
    throw std::system_error(err, std::generic_category(), "bubble: pthread_attr_init");
  }
  const long minimum = sysconf(_SC_THREAD_STACK_MIN);
  const std::size_t size =
      std::max(stack_size, minimum > 0 ? static_cast<std::size_t>(minimum) : std::size_t{16384});
  int err = pthread_attr_setstacksize(&attr, size);
  pthread_t thread{};
  if (err == 0) err = pthread_create(&thread, &attr, entry, arg);
  pthread_attr_destroy(&attr);
  if (err != 0) {
    throw std::system_error(err, std::generic_category(),
                            "bubble: starting the OS thread of a bubble thread (" +
                                std::to_string(size) + "-byte stack)");
  }
  return thread;
}

void join_os_thread(pthread_t thread) noexcept {
  const EngineCall call;
  pthread_join(thread, nullptr);
}

void detach_os_thread(pthread_t thread) noexcept {
  const EngineCall call;
  pthread_detach(thread);
}

}  // namespace bubble::detail
