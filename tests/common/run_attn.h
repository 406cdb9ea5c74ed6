#pragma once
// Runs the built `attn` binary (ATTN_BINARY, defined by tests/CMakeLists.txt) with arguments, as
// a user would from a shell, and returns its exit code and what it printed (stdout and stderr).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace attn::testing {

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline RunResult run_attn(const std::string& arguments) {
  RunResult result;
  FILE* pipe = popen((std::string(ATTN_BINARY) + " " + arguments + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace attn::testing
