// Forced decoding of sentence pairs read from files (`attn score`, `attn align --model`): the
// files' checks, and the records of cross-attention that word alignment reads, held to the
// model's shape (every decoder layer and head) and to softmax's rows summing to 1.
#include "decode/forced_pairs.h"

#include <memory>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/error.h"
#include "data/data_test_support.h"
#include "decode/random_tiny_model.h"

namespace attn {
namespace {

class ForcedPairsTest : public ::testing::Test {
 protected:
  // A random tiny model over a small vocabulary; max_positions 8 leaves 7 tokens for a sentence.
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(testing::fresh_temp_dir("forced_pairs"));
    loaded_ = new LoadedModel(testing::random_tiny_model(*dir_, 8, 5));
  }
  static void TearDownTestSuite() {
    delete loaded_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string write(const std::string& name, const std::vector<std::string>& lines) {
    testing::write_lines(*dir_ / name, lines);
    return (*dir_ / name).string();
  }
  static std::string problem(const std::string& source, const std::string& target) {
    try {
      force_decode_files(*loaded_, source, target, 4, nullptr);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  static std::filesystem::path* dir_;
  static LoadedModel* loaded_;
};

std::filesystem::path* ForcedPairsTest::dir_ = nullptr;
LoadedModel* ForcedPairsTest::loaded_ = nullptr;

TEST_F(ForcedPairsTest, FilesMustPairUpAndFitTheModel) {
  const std::string source = write("s.txt", {"God", "light"});
  const std::string target = write("t.txt", {"Dios"});
  EXPECT_EQ(problem(source, target), source + " has 2 lines but " + target + " has 1");
  const std::string long_target = write("long.txt", {"Dios", "And God said, Let there be light: and there was light."});
  EXPECT_EQ(problem(source, long_target), long_target + ":2: longer than the model's 7 tokens");
  EXPECT_EQ(problem(source, write("t2.txt", {"Dios", "luz"})), "");
}

TEST_F(ForcedPairsTest, CrossAttentionRecordsOfEveryLayerAndHead) {
  const std::vector<std::string> sources = {"God", "the light"}, targets = {"Dios", "la luz"};
  const std::vector<inspect::AttentionRecord> records =
      forced_cross_attention_records(*loaded_, write("s.txt", sources), write("t.txt", targets), 1);
  ASSERT_EQ(records.size(), 2u);
  const ModelConfig& config = loaded_->model->config();
  for (std::size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(i);
    const inspect::AttentionRecord& r = records[i];
    EXPECT_EQ(r.line, static_cast<std::int64_t>(i) + 1);
    EXPECT_EQ(r.source, sources[i]);
    EXPECT_EQ(r.target, targets[i]);
    EXPECT_EQ(r.score, r.log_prob);
    EXPECT_LT(r.log_prob, 0);
    // The pieces are the vocabulary's, then </s>.
    EXPECT_EQ(r.source_pieces.size(), loaded_->vocabulary->encode(sources[i]).size() + 1);
    EXPECT_EQ(r.target_pieces.size(), loaded_->vocabulary->encode(targets[i]).size() + 1);
    EXPECT_EQ(r.source_pieces.back(), "</s>");
    ASSERT_EQ(r.attention.size(), static_cast<std::size_t>(config.decoder_layers * config.heads));
    for (std::size_t m = 0; m < r.attention.size(); ++m) {
      const inspect::AttentionMatrix& a = r.attention[m];
      EXPECT_EQ(a.kind, inspect::AttentionKind::cross);
      EXPECT_EQ(a.layer, static_cast<int>(m) / config.heads);
      EXPECT_EQ(a.head, static_cast<int>(m) % config.heads);
      ASSERT_EQ(a.rows, static_cast<int>(r.target_pieces.size()));
      ASSERT_EQ(a.cols, static_cast<int>(r.source_pieces.size()));
      for (int row = 0; row < a.rows; ++row) {
        double sum = 0;
        for (int col = 0; col < a.cols; ++col) sum += a.at(row, col);
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
}

}  // namespace
}  // namespace attn
