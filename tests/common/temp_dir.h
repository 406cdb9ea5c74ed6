#pragma once
// A fresh, empty folder for one test, unique per process so parallel test runs never share one.
// The folders a process made are removed when it exits (set ATTN_KEEP_TEST_DIRS=1 to keep them
// for a look after a failure).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace attn::testing {

namespace detail {
struct TempDirs {
  pid_t owner = ::getpid();  // a forked child that exits normally must not remove its parent's folders
  std::vector<std::filesystem::path> made;
  ~TempDirs() {
    if (::getpid() != owner || std::getenv("ATTN_KEEP_TEST_DIRS")) return;
    std::error_code ignored;
    for (const auto& dir : made) std::filesystem::remove_all(dir, ignored);
  }
};
inline TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}
}  // namespace detail

inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("attn_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  detail::temp_dirs().made.push_back(dir);
  return dir;
}

}  // namespace attn::testing
