#pragma once
// Shared by the libFuzzer targets: inputs handed to readers that take a path, the split of one
// input into several files, and the checks whose failure is a finding.
//
// A target calls the same entry point the commands call, so the fuzzer checks the code users run.
// Where that entry point takes a path, the input is written to a file in memory-backed /dev/shm
// first (one folder per fuzzing process, removed at exit); a run costs a few microseconds more.
//
// What counts as a finding: a crash, a sanitizer report, a hang or an out-of-memory (libFuzzer's
// -timeout and -rss_limit_mb), an exception other than attn::Error escaping the reader (attn::Error
// is the expected answer to bad input and is caught by the target), and a broken documented
// property checked with FUZZ_CHECK.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace attn::fuzz {

// Byte 0xFF never occurs in UTF-8, so splitting text inputs on it loses no valid text: the parts
// of "hyp\xFFref1\xFFref2" are files of their own. (Invalid UTF-8 is still fuzzed through every
// other byte.)
inline constexpr char kPartSeparator = '\xFF';

inline std::vector<std::string_view> split_parts(std::string_view bytes) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = bytes.find(kPartSeparator, start);
    if (end == std::string_view::npos) {
      parts.push_back(bytes.substr(start));
      return parts;
    }
    parts.push_back(bytes.substr(start, end - start));
    start = end + 1;
  }
}

// This process's scratch folder, e.g. /dev/shm/attn-fuzz-1234: under $ATTN_FUZZ_SCRATCH when set
// (scripts/fuzz sets it and removes it afterwards, also after a crash, which skips atexit), else
// /dev/shm, else $TMPDIR or /tmp.
inline const std::filesystem::path& scratch_dir() {
  // Never destroyed: the exit handler registered below runs after the destructors of statics
  // initialised before it, and must still read the path.
  static const std::filesystem::path* const dir = [] {
    std::filesystem::path base = "/dev/shm";
    if (const char* scratch = std::getenv("ATTN_FUZZ_SCRATCH"); scratch && *scratch) {
      base = scratch;
    } else if (!std::filesystem::is_directory(base)) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp && *tmp ? tmp : "/tmp";
    }
    auto* d = new std::filesystem::path(base / ("attn-fuzz-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return d;
  }();
  return *dir;
}

// Writes `bytes` to scratch_dir()/name, replacing what the previous run left there.
inline std::string write_scratch_file(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch_dir() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();  // the harness failed, not the code under test; stop rather than fuzz nothing
  }
  return path;
}

[[noreturn]] inline void check_failed(const char* condition, const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", file, line, condition, what.c_str());
  std::abort();
}

}  // namespace attn::fuzz

// A documented property of the code under test; a violation aborts, which libFuzzer reports.
#define FUZZ_CHECK(condition, what)                                                       \
  do {                                                                                    \
    if (!(condition)) ::attn::fuzz::check_failed(#condition, __FILE__, __LINE__, (what)); \
  } while (0)
