// Race detection in a bubble, the engine's side: starting the detector, the hooks of code compiled
// with bubble::instrument (detail/race_hooks.hpp), the primitives' synchronization
// (Runtime::sync_release / sync_acquire), and the report of a race.

#include <dlfcn.h>
#include <link.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <bubble/detail/caller_location.hpp>
#include <bubble/detail/race_hooks.hpp>

#include <bubble/detail/demangle.hpp>
#include "engine/bubble.hpp"
#include "engine/report/call_stacks.hpp"

namespace bubble {
namespace engine {
namespace {

// The static thread-local storage of the calling OS thread: the blocks of the modules loaded at
// start, just below the thread pointer (x86-64 and AArch64 glibc keep them there), with room
// for the C library's surplus; and the thread control block above it. The fibers of a run share
// it, so accesses there are not races between bubble threads (with ThreadModel::os_threads
// each has its own).
std::pair<const void*, const void*> static_tls_range() noexcept {
  std::size_t total = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_TLS) {
            *static_cast<std::size_t*>(data) += ph.p_memsz + (ph.p_align > 0 ? ph.p_align : 1);
          }
        }
        return 0;
      },
      &total);
  constexpr std::size_t kSurplus = 4096;  // glibc's static surplus and alignment.
  constexpr std::size_t kControlBlock = 4096;
  const auto* tp = static_cast<const char*>(__builtin_thread_pointer());
  return {tp - total - kSurplus, tp + kControlBlock};
}

}  // namespace

RaceDetector& Bubble::race_detector() {
  if (!races_) {
    races_ = std::make_unique<RaceDetector>();
    for (BThread& t : live_threads_) races_->add_thread(static_cast<std::uint32_t>(t.id), t.name);
    if (!os_threads_) {
      const auto [begin, end] = static_tls_range();
      races_->ignore(begin, end);
    }
    set_checks_races(true);
  }
  return *races_;
}

void Bubble::synchronize(std::uint64_t object, bool release) {
  if (!races_) return;
  if (release) {
    races_->release(race_thread(), object);
  } else {
    races_->acquire(race_thread(), object);
  }
}

void Bubble::memory_access(const void* address, std::size_t size, bool write, const void* pc) {
  if (failed_ || !program_running()) return;  // The first failure (a race too) ends the checking.
  if (std::optional<Race> race = race_detector().access(race_thread(), address, size, write, pc)) {
    report_race(*race);
  }
}

void Bubble::memory_fresh(const void* address, std::size_t size) {
  if (races_) races_->forget(address, size);
}

void Bubble::function_entry(const void* pc) {
  if (program_running()) race_detector().function_entered(race_thread(), pc);
}

void Bubble::function_exit() noexcept {
  if (races_ && program_running()) races_->function_exited(race_thread());
}

std::string Bubble::describe_address(const void* address) const {
  const auto* a = static_cast<const char*>(address);
  for (const BThread& t : live_threads_) {
    const auto* bottom = static_cast<const char*>(t.stack_bottom);
    if (bottom != nullptr && a >= bottom && a < bottom + t.stack_size) {
      return "on the stack of thread #" + std::to_string(t.id) + " \"" + t.name + "\"";
    }
  }
  Dl_info info{};
  if (dladdr(address, &info) != 0) {
    if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
      const auto offset = static_cast<std::size_t>(a - static_cast<const char*>(info.dli_saddr));
      return "in " + detail::demangle(info.dli_sname) +
             (offset != 0 ? "+" + std::to_string(offset) : std::string());
    }
    if (info.dli_fname != nullptr && info.dli_fname[0] != '\0') {
      const char* slash = std::strrchr(info.dli_fname, '/');
      char buffer[48];
      std::snprintf(
          buffer, sizeof buffer, "+0x%" PRIxPTR,
          reinterpret_cast<std::uintptr_t>(a) - reinterpret_cast<std::uintptr_t>(info.dli_fbase));
      return std::string("in the static storage of ") +
             (slash != nullptr ? slash + 1 : info.dli_fname) + buffer;
    }
  }
  return "in heap memory";
}

std::string Bubble::race_access_lines(const Access& access, const char* which) {
  const std::string thread = access.thread == 0 ? std::string("a timer callback")
                                                : "thread #" + std::to_string(access.thread) +
                                                      " \"" + races_->name(access.thread) + "\"";
  std::vector<const void*> addresses = races_->stacks().addresses(access.stack);
  addresses.insert(addresses.begin(), access.pc);
  std::string location;
  std::string frames;
  if (options_.symbolize_stacks) {
    detail::CapturedStack stack;
    stack.size = std::min(addresses.size(), detail::CapturedStack::kMaxFrames);
    for (std::size_t i = 0; i < stack.size; ++i) {
      stack.frames[i] = const_cast<void*>(addresses[i]);
    }
    frames = detail::stack_lines(stack, options_.symbolize_stacks, "    ", &location);
  }
  if (location.empty()) location = detail::module_offset_text(access.pc);
  if (frames.empty()) {
    for (const void* pc : addresses) frames += "      " + detail::module_offset_text(pc) + "\n";
  }
  return "  " + std::string(which) + (access.write ? "write" : "read") + " of " +
         std::to_string(access.size) + " bytes by " + thread + " at " + location + "\n" + frames;
}

void Bubble::report_race(const Race& race) {
  const auto who = [&](const Access& a) {
    return a.thread == 0
               ? std::string("a timer callback")
               : "thread #" + std::to_string(a.thread) + " \"" + races_->name(a.thread) + "\"";
  };
  const std::string message =
      "data race: " + who(race.current) + (race.current.write ? " writes " : " reads ") +
      std::to_string(race.current.size) + " bytes " + describe_address(race.address) + " that " +
      who(race.previous) + (race.previous.write ? " wrote" : " read") +
      ", and nothing orders the two accesses";
  const std::string details =
      race_access_lines(race.current, "") + race_access_lines(race.previous, "previous ");
  fail(message, false, details);
}

}  // namespace engine

namespace detail {

using engine::tl_bubble;

void memory_access(const void* address, std::size_t size, bool write, const void* pc) noexcept {
  if (engine::Bubble* b = tl_bubble) b->memory_access(address, size, write, pc);
}

void memory_fresh(const void* address, std::size_t size) noexcept {
  if (engine::Bubble* b = tl_bubble) b->memory_fresh(address, size);
}

void function_entry(const void* pc) noexcept {
  if (engine::Bubble* b = tl_bubble) b->function_entry(pc);
}

void function_exit() noexcept {
  if (engine::Bubble* b = tl_bubble) b->function_exit();
}

}  // namespace detail
}  // namespace bubble
