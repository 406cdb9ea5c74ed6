#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/text_file.h"
#include "common/temp_dir.h"

namespace attn {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(AtomicFile, ReplacesContentOnlyOnCommit) {
  auto dir = testing::fresh_temp_dir("atomic");
  auto path = dir / "model.bin";
  write_file_atomic(path, "old");
  {
    AtomicFileWriter w(path);
    w.write("new but abandoned");
    // no commit: the writer is destroyed as if the process had failed half-way
  }
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1) << "temporary file left behind";
  write_file_atomic(path, "new");
  EXPECT_EQ(slurp(path), "new");
}

TEST(TextFile, NamesFileAndLineOfBadUtf8) {
  auto dir = testing::fresh_temp_dir("text");
  auto path = dir / "bad.txt";
  write_file_atomic(path, "fine\r\nalso fine\nbroken \xFF here\n");
  try {
    read_text_lines(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:3: invalid UTF-8 at byte 8"), std::string::npos) << e.what();
  }
  write_file_atomic(path, "a\r\nb\n\nc");
  EXPECT_EQ(read_text_lines(path), (std::vector<std::string>{"a", "b", "", "c"}));
}

}  // namespace attn
