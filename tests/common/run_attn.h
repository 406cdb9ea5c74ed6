#pragma once
// The one way a test runs the built `attn` binary (ATTN_BINARY, defined by tests/CMakeLists.txt):
// as a user would from a shell, under `timeout`, so that a hang fails its test in minutes instead
// of stalling CI.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace attn::testing {

struct RunResult {
  int exit_code = -1;  // 124: killed by the timeout; -1: killed by a signal, or not started
  std::string output;  // stderr, and stdout unless the arguments redirect it
};

// `attn ARGUMENTS` through sh: ARGUMENTS may quote, and redirect stdout ("> out.txt"), stderr
// ("2> err.txt", "> log 2>&1") or stdin ("< input.txt"); stdin is /dev/null otherwise.
inline RunResult run_attn(const std::string& arguments, int timeout_seconds = 600) {
  RunResult result;
  const std::string command =
      "timeout " + std::to_string(timeout_seconds) + " " + std::string(ATTN_BINARY) + " </dev/null 2>&1 " + arguments;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Each argument quoted for sh (none may hold a single quote).
inline std::string shell_words(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "'" : " '") + w + "'";
  return text;
}

}  // namespace attn::testing
