#include <bubble/signal_context.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace bubble {
namespace detail {

struct ContextAccess {
  static std::weak_ptr<ContextStateBase> weak(const Context& ctx) { return ctx.state_; }
  static CancelFunc cancel_func(std::shared_ptr<ContextStateBase> state) {
    return CancelFunc(std::move(state));
  }
};

}  // namespace detail

namespace {

constexpr int kMaxSignal = 256;

// Written once (before any handler is installed) and read by the signal handler.
std::atomic<int> g_pipe_write{-1};

// The signal handler: async-signal-safe (write(2) only; errno is preserved).
extern "C" void on_signal(int signal) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signal);
  const int fd = g_pipe_write.load(std::memory_order_relaxed);
  if (fd >= 0) {
    // A full pipe drops the byte: the watcher is already behind with deliveries of signals.
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

struct Entry {
  std::vector<int> signals;
  Runtime* runtime;  // The runtime that created the context (compared, never dereferenced).
  bool controlled;   // runtime->controlled() at creation.
  std::weak_ptr<detail::ContextStateBase> state;
};

// Process-wide registry of signal contexts. Never destroyed (the watcher thread may use it while
// the process exits).
class Registry {
 public:
  static Registry& get() {
    static Registry* const registry = new Registry;
    return *registry;
  }

  Context add(std::initializer_list<int> signals) {
    if (signals.size() == 0) {
      throw std::invalid_argument("bubble::signal_context: the list of signals must not be empty");
    }
    for (const int sig : signals) {
      if (sig <= 0 || sig >= kMaxSignal || sig == SIGKILL || sig == SIGSTOP) {
        throw std::invalid_argument("bubble::signal_context: cannot handle signal " +
                                    std::to_string(sig));
      }
    }
    Runtime& rt = current_runtime();
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    std::lock_guard<std::mutex> lock(mutex_);
    if (!rt.controlled()) {
      start_watcher_locked();
      for (const int sig : signals) install_locked(sig);
    }
    // Forget contexts that ended or were dropped.
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [](const Entry& e) {
                                    const auto s = e.state.lock();
                                    return !s || s->status.load(std::memory_order_acquire) != 0;
                                  }),
                   entries_.end());
    entries_.push_back(
        Entry{std::vector<int>(signals), &rt, rt.controlled(), detail::ContextAccess::weak(ctx)});
    return ctx;
  }

  // Cancels the contexts of `rt` (nullptr: of every uncontrolled runtime) that watch `sig`.
  void cancel(int sig, Runtime* rt) {
    std::vector<std::shared_ptr<detail::ContextStateBase>> to_cancel;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end();) {
        const bool ours = rt != nullptr ? it->runtime == rt : !it->controlled;
        if (ours && std::find(it->signals.begin(), it->signals.end(), sig) != it->signals.end()) {
          if (auto s = it->state.lock()) to_cancel.push_back(std::move(s));
          it = entries_.erase(it);
        } else {
          ++it;
        }
      }
    }
    // Outside the lock: callbacks may create signal contexts.
    for (auto& s : to_cancel) detail::ContextAccess::cancel_func(std::move(s))();
  }

  // The test hook outside bubbles: the same path as the handler.
  void deliver_system(int sig) {
    if (g_pipe_write.load(std::memory_order_acquire) >= 0) on_signal(sig);
  }

 private:
  void start_watcher_locked() {
    if (g_pipe_write.load(std::memory_order_relaxed) >= 0) return;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(), "bubble::signal_context: pipe2");
    }
    ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    const int read_fd = fds[0];
    std::thread([this, read_fd] { watch(read_fd); }).detach();
    g_pipe_write.store(fds[1], std::memory_order_release);
  }

  void install_locked(int sig) {
    if (installed_[static_cast<std::size_t>(sig)]) return;
    struct sigaction action {};
    std::memset(&action, 0, sizeof action);
    action.sa_handler = &on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (::sigaction(sig, &action, nullptr) != 0) {
      throw std::invalid_argument("bubble::signal_context: cannot handle signal " +
                                  std::to_string(sig) + ": " + std::strerror(errno));
    }
    installed_[static_cast<std::size_t>(sig)] = true;
  }

  void watch(int read_fd) {
    for (;;) {
      unsigned char byte;
      const ssize_t n = ::read(read_fd, &byte, 1);
      if (n == 1) {
        cancel(byte, nullptr);
      } else if (n == 0 || (n < 0 && errno != EINTR)) {
        return;
      }
    }
  }

  std::mutex mutex_;
  std::vector<Entry> entries_;
  std::array<bool, kMaxSignal> installed_{};
};

}  // namespace

Context signal_context(std::initializer_list<int> signals) {
  return Registry::get().add(signals);
}

void deliver_signal(int signal) {
  if (signal <= 0 || signal >= kMaxSignal) {
    throw std::invalid_argument("bubble::deliver_signal: invalid signal " + std::to_string(signal));
  }
  if (in_bubble()) {
    Registry::get().cancel(signal, &current_runtime());
  } else {
    Registry::get().deliver_system(signal);
  }
}

}  // namespace bubble
