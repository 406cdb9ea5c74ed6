// Precision, recall and AER (Och & Ney 2003) on a two-sentence example worked by hand.
#include "inspect/alignment_score.h"

#include <gtest/gtest.h>

namespace attn::inspect {
namespace {

// Sentence 1: gold "0-0 1-1 1?2" (S = {0-0, 1-1}, P = S ∪ {1-2}), A = {0-0, 1-2, 2-1}:
//   |A| = 3, |S| = 2, A∩S = {0-0} (1), A∩P = {0-0, 1-2} (2).
// Sentence 2: gold "0-1 1-0" (S = P), A = {0-1, 1-0}: |A| = 2, |S| = 2, A∩S = 2, A∩P = 2.
// Corpus: |A| = 5, |S| = 4, |A∩S| = 3, |A∩P| = 4
//   precision = 4/5 = 0.8, recall = 3/4 = 0.75, AER = 1 − (3 + 4)/(5 + 4) = 2/9.
std::vector<GoldAlignment> gold() {
  return {parse_pharaoh_line("0-0 1-1 1?2", "g", 1), parse_pharaoh_line("0-1 1-0", "g", 2)};
}
std::vector<Alignment> predicted() { return {{{0, 0}, {1, 2}, {2, 1}}, {{0, 1}, {1, 0}}}; }

TEST(AlignmentScore, PrecisionRecallAer) {
  const AlignmentScore score = score_alignments(predicted(), gold());
  EXPECT_EQ(score.predicted, 5u);
  EXPECT_EQ(score.sure, 4u);
  EXPECT_EQ(score.predicted_in_sure, 3u);
  EXPECT_EQ(score.predicted_in_possible, 4u);
  EXPECT_DOUBLE_EQ(score.precision(), 0.8);
  EXPECT_DOUBLE_EQ(score.recall(), 0.75);
  EXPECT_DOUBLE_EQ(score.aer(), 2.0 / 9.0);
}

// Tagged words: sentence 1 "0 1 ||| 0 2" drops 2-1 (source word 2 untagged); sentence 2 "0 1 ||| 0 1"
// keeps both. Then |A| = 4, |S| = 4, |A∩S| = 3, |A∩P| = 4:
//   precision = 4/4 = 1, recall = 3/4, AER = 1 − 7/8 = 1/8.
TEST(AlignmentScore, TaggedWordsRestrictThePrediction) {
  const std::vector<TaggedWords> tagged = {parse_tagged_line("0 1 ||| 0 2", "t", 1),
                                           parse_tagged_line("0 1 ||| 0 1", "t", 2)};
  const AlignmentScore score = score_alignments(predicted(), gold(), tagged);
  EXPECT_EQ(score.predicted, 4u);
  EXPECT_EQ(score.sure, 4u);
  EXPECT_DOUBLE_EQ(score.precision(), 1.0);
  EXPECT_DOUBLE_EQ(score.recall(), 0.75);
  EXPECT_DOUBLE_EQ(score.aer(), 0.125);
}

TEST(AlignmentScore, PerfectAndEmpty) {
  const std::vector<GoldAlignment> g = gold();
  const AlignmentScore perfect = score_alignments({{{0, 0}, {1, 1}}, {{0, 1}, {1, 0}}}, g);
  EXPECT_DOUBLE_EQ(perfect.aer(), 0.0);
  // No predicted links: precision has nothing wrong (1), recall 0, AER 1 − 0/4 = 1.
  const AlignmentScore none = score_alignments({{}, {}}, g);
  EXPECT_DOUBLE_EQ(none.precision(), 1.0);
  EXPECT_DOUBLE_EQ(none.recall(), 0.0);
  EXPECT_DOUBLE_EQ(none.aer(), 1.0);
  EXPECT_DOUBLE_EQ(AlignmentScore{}.aer(), 0.0);
}

}  // namespace
}  // namespace attn::inspect
