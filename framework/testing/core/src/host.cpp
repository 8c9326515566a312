#include <bubble/testing/host.hpp>

#include <unistd.h>

#include <exception>
#include <string>

namespace bubble::testing {

std::string HostResult::describe() const {
  return (file.empty() ? std::string("unknown file") : file) + ":" + std::to_string(line) + ": " +
         message + "\n";
}

bool TestHost::is_fatal_assertion(const std::exception_ptr& /*e*/) const {
  return false;
}

std::string self_executable() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "<test program>";
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

std::string shell_word(const std::string& word) {
  const bool safe = !word.empty() && word.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-./=:,+@%") == std::string::npos;
  if (safe) return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace bubble::testing
