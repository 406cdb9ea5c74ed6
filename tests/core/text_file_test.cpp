// The one line reader and the one fixed-point formatter of core/, against hand-written cases.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/error.h"
#include "core/number_format.h"
#include "core/text_file.h"

namespace attn {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string line; read_line(in, line);) out.push_back(line);
  return out;
}

TEST(ReadLine, DropsTheLineEndingLfOrCrlfAndKeepsEverythingElse) {
  EXPECT_EQ(lines_of("a\nb\r\nc"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(lines_of("a\r\n\r\n"), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(lines_of("x\ry\r\r\n"), (std::vector<std::string>{"x\ry\r"}));  // only the last \r goes
  EXPECT_EQ(lines_of(" a \t\n"), (std::vector<std::string>{" a \t"}));
  EXPECT_TRUE(lines_of("").empty());
}

TEST(ReadTextLines, NamesTheFileAndLineOfInvalidUtf8) {
  const auto dir = testing::fresh_temp_dir("text_file");
  std::ofstream(dir / "ok.txt", std::ios::binary) << "uno\r\ndós\n";
  EXPECT_EQ(read_text_lines(dir / "ok.txt"), (std::vector<std::string>{"uno", "dós"}));
  std::ofstream(dir / "bad.txt", std::ios::binary) << "uno\nd\xC3s\n";
  try {
    read_text_lines(dir / "bad.txt");
    FAIL() << "invalid UTF-8 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "bad.txt").string() + ":2: invalid UTF-8 at byte 2"), std::string::npos)
        << e.what();
  }
}

TEST(FormatFixed, RoundsTheExactBinaryValueTiesToEven) {
  EXPECT_EQ(format_fixed(2.5, 2), "2.50");
  EXPECT_EQ(format_fixed(0.125, 2), "0.12");  // exact tie: to even
  EXPECT_EQ(format_fixed(0.375, 2), "0.38");  // exact tie: to even
  EXPECT_EQ(format_fixed(2.675, 2), "2.67");  // 2.67499999999999982236431605997495353221893310546875
  EXPECT_EQ(format_fixed(-0.5, 0), "-0");
  EXPECT_EQ(format_fixed(1e21, 1), "1000000000000000000000.0");
  EXPECT_EQ(format_fixed(37.8249, 2), "37.82");
  EXPECT_THROW(format_fixed(1.0, 61), Error);
}

}  // namespace
}  // namespace attn
