// Where a call came from (detail/caller_location.hpp).

#include <bubble/detail/caller_location.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

namespace bubble::detail {
namespace {

// The table of texts made so far, keyed by (entry point, return address). Never destroyed: the
// locations it hands out may be read by a report during static destruction.
struct Key {
  const char* entry_point;
  const void* address;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    return std::hash<const void*>{}(k.address) ^ (std::hash<const void*>{}(k.entry_point) << 1);
  }
};
using Table = std::unordered_map<Key, std::unique_ptr<std::string>, KeyHash>;

constinit std::atomic<bool> table_busy{false};
constinit Table* table = nullptr;

// A spin lock: a pthread mutex here would call back into the overrides.
struct TableLock {
  TableLock() noexcept {
    while (table_busy.exchange(true, std::memory_order_acquire)) {
    }
  }
  ~TableLock() { table_busy.store(false, std::memory_order_release); }
  TableLock(const TableLock&) = delete;
  TableLock& operator=(const TableLock&) = delete;
};

}  // namespace

std::string module_offset_text(const void* return_address) {
  // The call instruction ends just before the return address: one byte back is inside it, which
  // is what symbolizers look up (the return address itself may be the next line's).
  const auto address = reinterpret_cast<std::uintptr_t>(return_address) - 1;
  char buffer[64];
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(address), &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] != '\0') {
    const char* slash = std::strrchr(info.dli_fname, '/');
    std::snprintf(buffer, sizeof buffer, "+0x%" PRIxPTR,
                  address - reinterpret_cast<std::uintptr_t>(info.dli_fbase));
    return std::string(slash != nullptr ? slash + 1 : info.dli_fname) + buffer;
  }
  std::snprintf(buffer, sizeof buffer, "0x%" PRIxPTR, address);
  return buffer;
}

SourceLocation caller_location(const char* entry_point, const void* return_address) noexcept {
  try {
    TableLock lock;
    if (table == nullptr) table = new Table;
    auto& text = (*table)[Key{entry_point, return_address}];
    if (!text) {
      text = std::make_unique<std::string>(std::string(entry_point) + " called from " +
                                           module_offset_text(return_address));
    }
    return SourceLocation::current(text->c_str(), 0, entry_point);
  } catch (const std::bad_alloc&) {
    return SourceLocation::current("", 0, entry_point);
  }
}

}  // namespace bubble::detail
