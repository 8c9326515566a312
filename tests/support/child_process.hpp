#pragma once

// Running this test program again in a child process, for tests of what the environment and a
// fresh process change.

#include <cstdio>
#include <string>

#include <bubble/testing/host.hpp>

namespace bubble::test_support {

// This test program (/proc/self/exe), quoted for a POSIX shell.
inline std::string self_command() {
  return testing::shell_word(testing::self_executable());
}

// Runs `command` with the shell and returns what it wrote on its standard output (redirect
// standard error into it with 2>&1 to see both), or "popen failed".
inline std::string output_of(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  ::pclose(pipe);
  return out;
}

}  // namespace bubble::test_support
