// Reading scores files: what attn report and the Table 3 study take from `attn bleu --json` (and
// from sacreBLEU's own JSON), and clear errors for anything else.
#include "eval/sacrebleu_json.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_dir.h"
#include "core/error.h"

namespace attn::eval {
namespace {

std::string error_of(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file) << text;
  try {
    read_score_file(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ScoreFile, ArrayAndSingleObjectAsSacrebleuWritesThem) {
  const auto dir = attn::testing::fresh_temp_dir("score_file");
  // sacrebleu 2.5.1 --format json with one metric writes one object (abridged).
  std::ofstream(dir / "one.json")
      << R"({"name": "BLEU", "score": 48.5, "signature": "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1", "verbose_score": "x"})";
  const auto one = read_score_file(dir / "one.json");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "BLEU");
  EXPECT_DOUBLE_EQ(one[0].score, 48.5);
  EXPECT_EQ(one[0].signature, "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1");
  std::ofstream(dir / "two.json") << R"([{"name":"BLEU","score":1.25},{"name":"chrF2","score":40,"signature":"s"}])";
  const auto two = read_score_file(dir / "two.json");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].signature, "");
  EXPECT_EQ(two[1].name, "chrF2");
  EXPECT_DOUBLE_EQ(two[1].score, 40.0);
  std::ofstream(dir / "none.json") << "[]";
  EXPECT_TRUE(read_score_file(dir / "none.json").empty());
}

TEST(ScoreFile, BadFilesNamedWithEntryAndKey) {
  const auto dir = attn::testing::fresh_temp_dir("score_file_bad");
  const auto f = dir / "s.json";
  EXPECT_NE(error_of(f, "[{").find(f.string() + ": not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(f, "[3]").find("entry 1: not an object"), std::string::npos);
  EXPECT_NE(error_of(f, R"([{"name":"BLEU","score":1},{"score":2}])").find("entry 2: \"name\" must be a string"),
            std::string::npos);
  EXPECT_NE(error_of(f, R"([{"name":"BLEU","score":"48"}])").find("entry 1: \"score\" must be a number"),
            std::string::npos);
  EXPECT_NE(error_of(f, R"({"name":"BLEU","score":1,"signature":7})").find("\"signature\" must be a string"),
            std::string::npos);
  EXPECT_EQ(error_of(f, R"([{"name":"BLEU","score":1}])"), "no error");
}

}  // namespace
}  // namespace attn::eval
