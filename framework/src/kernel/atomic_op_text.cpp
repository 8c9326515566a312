// The texts traces and reports show for atomic operations (detail::atomic_op_text).

#include <array>
#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

#include <bubble/detail/atomic_hooks.hpp>

namespace bubble::detail {
namespace {

constexpr std::array<std::string_view, 15> kOps = {"load",
                                                   "store",
                                                   "exchange",
                                                   "compare_exchange_weak",
                                                   "compare_exchange_strong",
                                                   "fetch_add",
                                                   "fetch_sub",
                                                   "fetch_and",
                                                   "fetch_or",
                                                   "fetch_xor",
                                                   "fetch_nand",
                                                   "wait",
                                                   "notify_one",
                                                   "notify_all",
                                                   "thread_fence"};
constexpr std::array<std::string_view, 6> kOrders = {"relaxed", "consume", "acquire",
                                                     "release", "acq_rel", "seq_cst"};
constexpr std::array<std::string_view, 2> kPrefixes = {"Atomic::", "atomic "};

constexpr std::size_t kTexts = kPrefixes.size() * kOps.size() * kOrders.size();

// Every text, made once: "Atomic::fetch_add(acq_rel)", "atomic load(acquire)", ...
const std::array<std::string, kTexts>& texts() {
  static const std::array<std::string, kTexts> all = [] {
    std::array<std::string, kTexts> t;
    std::size_t i = 0;
    for (std::string_view prefix : kPrefixes) {
      for (std::string_view op : kOps) {
        for (std::string_view order : kOrders) {
          // A notify has no memory order of its own: its text names none.
          const bool ordered = op != "notify_one" && op != "notify_all";
          t[i++] = std::string(prefix) + std::string(op) +
                   (ordered ? "(" + std::string(order) + ")" : std::string());
        }
      }
    }
    return t;
  }();
  return all;
}

}  // namespace

std::string_view atomic_op_text(AtomicSource source, AtomicOp op,
                                std::memory_order order) noexcept {
  const auto s = static_cast<std::size_t>(source);
  const auto o = static_cast<std::size_t>(op);
  const auto m = static_cast<std::size_t>(order);
  if (s >= kPrefixes.size() || o >= kOps.size() || m >= kOrders.size()) return "atomic";
  return texts()[(s * kOps.size() + o) * kOrders.size() + m];
}

}  // namespace bubble::detail
