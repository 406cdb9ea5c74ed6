// Word alignments from cross-attention, on hand-made matrices with hand-worked results.
#include "inspect/word_alignment.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace attn::inspect {
namespace {

AttentionMatrix cross(int layer, int head, int rows, int cols, std::vector<float> weights) {
  AttentionMatrix matrix;
  matrix.layer = layer;
  matrix.head = head;
  matrix.rows = rows;
  matrix.cols = cols;
  matrix.weights = std::move(weights);
  return matrix;
}

// Source "la casa" = ▁la ▁ca sa </s>, target "the house" = ▁the ▁ho use </s>. Dyadic weights, so
// every sum and mean below is exact.
AttentionRecord la_casa() {
  AttentionRecord record;
  record.source_pieces = {"▁la", "▁ca", "sa", "</s>"};
  record.target_pieces = {"▁the", "▁ho", "use", "</s>"};
  record.attention.push_back(cross(0, 0, 4, 4,
                                   {0.5f, 0.125f, 0.125f, 0.25f,   // ▁the
                                    0.125f, 0.5f, 0.25f, 0.125f,   // ▁ho
                                    0.375f, 0.125f, 0.25f, 0.25f,  // use
                                    0.0f, 0.0f, 0.0f, 1.0f}));     // </s>
  return record;
}

// Columns of a source word are summed, rows of a target word averaged, </s> dropped:
//   the   = [0.5, 0.125 + 0.125]                               = [0.5, 0.25]
//   house = mean([0.125, 0.5 + 0.25], [0.375, 0.125 + 0.25])  = mean([0.125, 0.75], [0.375, 0.375])
//         = [0.25, 0.5625]
TEST(WordAlignment, MergesPiecesIntoWords) {
  const AttentionRecord record = la_casa();
  const WordAttention words = word_attention(record.attention[0], record.source_pieces, record.target_pieces);
  ASSERT_EQ(words.rows, 2);
  ASSERT_EQ(words.cols, 2);
  EXPECT_EQ(words.weights, (std::vector<double>{0.5, 0.25, 0.25, 0.5625}));
}

TEST(WordAlignment, ArgmaxLinksEachTargetWord) { EXPECT_EQ(format_pharaoh(align_record(la_casa(), {})), "0-0 1-1"); }

TEST(WordAlignment, ThresholdLinksEveryWordAtOrAboveIt) {
  AlignmentOptions options;
  options.threshold = 0.3;  // the: la (0.5); house: casa (0.5625)
  EXPECT_EQ(format_pharaoh(align_record(la_casa(), options)), "0-0 1-1");
  options.threshold = 0.25;  // 0.25 itself counts: the-casa and house-la join
  EXPECT_EQ(format_pharaoh(align_record(la_casa(), options)), "0-0 0-1 1-0 1-1");
  options.threshold = 0.6;  // no word reaches it: target words stay unlinked
  EXPECT_EQ(format_pharaoh(align_record(la_casa(), options)), "");
}

TEST(WordAlignment, ArgmaxTiesGoToTheLowestSourceWord) {
  WordAttention words;
  words.rows = 2;
  words.cols = 3;
  words.weights = {0.25, 0.375, 0.375,  // tie between 1 and 2 → 1
                   0.5,  0.5,   0.0};   // tie between 0 and 1 → 0
  EXPECT_EQ(hard_links(words, 0), (Alignment{{0, 1}, {1, 0}}));
}

TEST(WordAlignment, EmptySentencesGiveNoLinks) {
  AttentionRecord record;
  record.source_pieces = {"</s>"};
  record.target_pieces = {"▁hola", "</s>"};
  record.attention.push_back(cross(0, 0, 2, 1, {1.0f, 1.0f}));
  EXPECT_EQ(format_pharaoh(align_record(record, {})), "");
  record.source_pieces = {"▁hola", "</s>"};
  record.target_pieces = {"</s>"};
  record.attention[0] = cross(0, 0, 1, 2, {0.5f, 0.5f});
  EXPECT_EQ(format_pharaoh(align_record(record, {})), "");
}

// attn translate writes an empty input line as a record with no matrices at all.
TEST(WordAlignment, RecordOfAnEmptyLineGivesNoLinks) {
  AttentionRecord record;
  record.source_pieces = {"</s>"};
  record.target_pieces = {"</s>"};
  EXPECT_EQ(format_pharaoh(align_record(record, {})), "");
  record.source_pieces = {"▁hola", "</s>"};  // words but no matrices: not an empty line, an error
  record.target_pieces = {"▁hi", "</s>"};
  EXPECT_THROW(align_record(record, {}), Error);
}

// Two layers of two heads over "a b" → "x y". Layer 0 head 0 links x-a y-b, head 1 links both to b;
// their mean for x is [(1 + 0.25)/2, (0 + 0.75)/2] = [0.625, 0.375] → a, for y [0, 1] → b.
AttentionRecord two_layers() {
  AttentionRecord record;
  record.source_pieces = {"▁a", "▁b", "</s>"};
  record.target_pieces = {"▁x", "▁y", "</s>"};
  record.attention.push_back(cross(0, 0, 3, 3, {1, 0, 0, 0, 1, 0, 0, 0, 1}));
  record.attention.push_back(cross(0, 1, 3, 3, {0.25f, 0.75f, 0, 0, 1, 0, 0, 0, 1}));
  record.attention.push_back(cross(1, 0, 3, 3, {0, 1, 0, 1, 0, 0, 0, 0, 1}));
  record.attention.push_back(cross(1, 1, 3, 3, {0, 1, 0, 1, 0, 0, 0, 0, 1}));
  return record;
}

TEST(WordAlignment, HeadChoice) {
  const AttentionRecord record = two_layers();
  EXPECT_EQ(cross_layer_count(record), 2);
  EXPECT_EQ(cross_head_count(record, 0), 2);
  const AttentionMatrix mean = cross_attention(record, 0, kMeanOfHeads);
  EXPECT_EQ(mean.weights, (std::vector<float>{0.625f, 0.375f, 0, 0, 1, 0, 0, 0, 1}));
  AlignmentOptions options;
  options.layer = 0;
  EXPECT_EQ(format_pharaoh(align_record(record, options)), "0-0 1-1");
  options.head = 1;
  EXPECT_EQ(format_pharaoh(align_record(record, options)), "1-0 1-1");
  options.layer = 1;
  options.head = kMeanOfHeads;
  EXPECT_EQ(format_pharaoh(align_record(record, options)), "0-1 1-0");
}

TEST(WordAlignment, DefaultLayerIsTheLast) {
  EXPECT_EQ(default_alignment_layer(1), 0);
  EXPECT_EQ(default_alignment_layer(2), 1);
  EXPECT_EQ(default_alignment_layer(6), 5);
  EXPECT_EQ(format_pharaoh(align_record(two_layers(), {})), "0-1 1-0");  // layer 1 of 2, mean: x -> b, y -> a
}

TEST(WordAlignment, MissingLayerOrHeadIsAnError) {
  const AttentionRecord record = two_layers();
  EXPECT_THROW(cross_attention(record, 2, kMeanOfHeads), Error);
  EXPECT_THROW(cross_attention(record, 0, 2), Error);
}

// round((j + 0.5)·S/T − 0.5), halves away from zero, clamped.
TEST(WordAlignment, DiagonalBaseline) {
  EXPECT_EQ(format_pharaoh(diagonal_alignment(3, 3)), "0-0 1-1 2-2");
  // S = 2, T = 4: −0.25, 0.25, 0.75, 1.25 → 0, 0, 1, 1
  EXPECT_EQ(format_pharaoh(diagonal_alignment(2, 4)), "0-0 0-1 1-2 1-3");
  // S = 5, T = 2: 0.75, 3.25 → 1, 3
  EXPECT_EQ(format_pharaoh(diagonal_alignment(5, 2)), "1-0 3-1");
  // S = 4, T = 2: 0.5, 2.5 → 1, 3 (halves away from zero)
  EXPECT_EQ(format_pharaoh(diagonal_alignment(4, 2)), "1-0 3-1");
  EXPECT_EQ(format_pharaoh(diagonal_alignment(0, 3)), "");
  EXPECT_EQ(format_pharaoh(diagonal_alignment(3, 0)), "");
}

}  // namespace
}  // namespace attn::inspect
