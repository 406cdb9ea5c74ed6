// What `attn align` writes for attention records and for alignment files, without the binary: the
// records are made by hand, so each head's links are known (see alignment_sweep_test.cpp).
#include "inspect/alignment_run.h"

#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/error.h"

namespace attn::inspect {
namespace {

// "la casa" → "the house": layer 0 links the → la, house → casa (0-0 1-1); layer 1 the reverse
// (1-0 0-1), with "the" putting 0.6 on casa and 0.4 on la.
AttentionRecord record() {
  AttentionRecord r;
  r.line = 1;
  r.source_pieces = {"▁la", "▁casa", "</s>"};
  r.target_pieces = {"▁the", "▁house", "</s>"};
  for (int layer : {0, 1}) {
    AttentionMatrix m;
    m.layer = layer;
    m.rows = 3;
    m.cols = 3;
    m.weights = layer == 0 ? std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}
                           : std::vector<float>{0.4f, 0.6f, 0, 1, 0, 0, 0, 0, 1};
    r.attention.push_back(m);
  }
  return r;
}

class AlignmentRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("alignment_run"); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  std::filesystem::path dir_;
};

TEST_F(AlignmentRun, PharaohLinesOfTheChosenLayer) {
  AlignmentRequest request;
  request.attention = "a.jsonl";
  EXPECT_EQ(align_attention_records(request, {record()}, "a.jsonl"), "0-1 1-0\n");  // the last layer
  request.layer = 0;
  EXPECT_EQ(align_attention_records(request, {record()}, "a.jsonl"), "0-0 1-1\n");
  request.layer = 1;
  request.threshold = 0.4;  // "the" reaches la (0.4) and casa (0.6)
  EXPECT_EQ(align_attention_records(request, {record()}, "a.jsonl"), "0-0 0-1 1-0\n");
  request.head = std::string("2");  // not = "2": GCC 12 warns wrongly (-Wrestrict) on that assignment
  try {
    align_attention_records(request, {record()}, "a.jsonl");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("a.jsonl:1: ", 0), 0u) << e.what();
  }
}

// Gold 0-0 1-1: layer 0 is right (100, 100, 0), layer 1 has both links wrong (0, 0, 100).
TEST_F(AlignmentRun, ScoresAgainstTheGold) {
  AlignmentRequest request;
  request.attention = "a.jsonl";
  request.gold = write("gold.txt", "0-0 1-1\n");
  request.layer = 0;
  EXPECT_EQ(align_attention_records(request, {record()}, "a.jsonl"),
            "precision  recall     AER  alignment\n"
            "   100.00  100.00    0.00  a.jsonl\n");
  request.layer = 1;
  EXPECT_EQ(align_attention_records(request, {record()}, "a.jsonl"),
            "precision  recall     AER  alignment\n"
            "     0.00    0.00  100.00  a.jsonl\n");
  request.layer = -1;
  request.sweep = true;
  EXPECT_EQ(align_attention_records(request, {record()}, "a.jsonl"),
            "layer  head  precision  recall     AER\n"
            "    0     0     100.00  100.00    0.00  *\n"
            "    0  mean     100.00  100.00    0.00\n"
            "    1     0       0.00    0.00  100.00  *\n"
            "    1  mean       0.00    0.00  100.00\n"
            "* the lowest AER of the layer\n");
}

// The diagonal of two words each is 0-0 1-1, the gold's links exactly.
TEST_F(AlignmentRun, BaselineRowsAreNamedByTheBaseline) {
  AlignmentRequest request;
  request.baseline = "diagonal";
  request.source = write("s.txt", "la casa\n");
  request.target = write("t.txt", "the house\n");
  EXPECT_EQ(align_by_baseline(request), "0-0 1-1\n");
  request.gold = write("gold.txt", "0-0 1-1\n");
  EXPECT_EQ(align_by_baseline(request),
            "precision  recall     AER  alignment\n"
            "   100.00  100.00    0.00  diagonal baseline\n");
}

// w.txt: one of two links right: precision = recall = 1/2, AER = 1 − 2/4 = 50%.
TEST_F(AlignmentRun, ScoresAlignmentFilesInTheirOrder) {
  AlignmentRequest request;
  request.gold = write("gold.txt", "0-0 1-1\n");
  const std::string wrong = write("w.txt", "0-0 0-1\n");
  request.alignments = {wrong, request.gold};
  EXPECT_EQ(score_alignment_files(request),
            "precision  recall     AER  alignment\n"
            "    50.00   50.00   50.00  " +
                wrong +
                "\n"
                "   100.00  100.00    0.00  " +
                request.gold + "\n");
}

}  // namespace
}  // namespace attn::inspect
