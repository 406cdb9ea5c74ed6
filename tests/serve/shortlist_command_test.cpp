// `attn shortlist build --method attention` from the command line, on the reversal model of
// serve_test_model: target = source reversed, so each word's translation is itself, and a model
// whose attention has learnt the reversal links every source piece to its own piece.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_attn.h"
#include "common/temp_dir.h"

namespace attn::serve {
namespace {

const std::string kModelDir = std::string(ATTN_SERVE_MODEL_DIR) + "/model";
const std::string kDevSource = std::string(ATTN_SERVE_MODEL_DIR) + "/dev.src";
const std::string kDevTarget = std::string(ATTN_SERVE_MODEL_DIR) + "/dev.tgt";

std::vector<std::string> file_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ShortlistCommand, AttentionLinksEachReversedWordToItself) {
  const auto dir = testing::fresh_temp_dir("shortlist_command");
  const std::string file = (dir / "attention.shortlist").string();
  const std::string build = "shortlist build -m " + kModelDir + " --train-source " + kDevSource + " --train-target " +
                            kDevTarget + " --per-source 3 --frequent 0 --method attention";
  const auto built = testing::run_attn(build + " -o " + file);
  ASSERT_EQ(built.exit_code, 0) << built.output;

  const auto lines = file_lines(file);
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(lines[2], "per_source 3 frequent 0 attention_layer 1");  // the model's last of 2 decoder layers
  int sources = 0;
  for (std::size_t i = 4; i + 1 < lines.size(); ++i) {  // "SOURCE TARGET:P ...", then the checksum line
    std::istringstream fields(lines[i]);
    std::string source, first;
    fields >> source >> first;
    const auto colon = first.find(':');
    ASSERT_NE(colon, std::string::npos) << lines[i];
    // Its own piece first, with most of its links (0.74-0.87 on this model; IBM Model 1 over the
    // same pairs finds the same first candidates).
    EXPECT_EQ(first.substr(0, colon), source) << lines[i];
    EXPECT_GT(std::stod(first.substr(colon + 1)), 0.5) << lines[i];
    ++sources;
  }
  EXPECT_EQ(sources, 14) << "every word of the 14-word task";

  const auto translated = testing::run_attn("translate -q -m " + kModelDir + " -i " + kDevSource + " -o " +
                                            (dir / "out.txt").string() + " --shortlist " + file + " --shortlist-k 3");
  EXPECT_EQ(translated.exit_code, 0) << translated.output;

  const auto bad_layer = testing::run_attn(build + " --layer 2 -o " + (dir / "never").string());
  EXPECT_NE(bad_layer.exit_code, 0);
  EXPECT_NE(bad_layer.output.find("--layer 2: the model's decoder layers are 0-1"), std::string::npos)
      << bad_layer.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "never")) << "nothing written on an error";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn::serve
