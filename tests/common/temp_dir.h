#pragma once
// A fresh, empty folder for one test, unique per process so parallel test runs never share one.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace attn::testing {

inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("attn_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace attn::testing
