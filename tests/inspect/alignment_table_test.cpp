// The score tables of `attn align`, from hand-made link counts: the percentages worked by hand from
// Och & Ney's formulas, laid out as docs/alignment.md shows them.
#include "inspect/alignment_table.h"

#include <gtest/gtest.h>

#include "inspect/attention_record.h"

namespace attn::inspect {
namespace {

AlignmentScore counts(std::size_t predicted, std::size_t sure, std::size_t in_sure, std::size_t in_possible) {
  AlignmentScore s;
  s.predicted = predicted;
  s.sure = sure;
  s.predicted_in_sure = in_sure;
  s.predicted_in_possible = in_possible;
  return s;
}

// |A| = 3, |S| = 3, |A∩S| = |A∩P| = 1: precision = recall = 1/3 = 33.33%, AER = 1 − 2/6 = 66.67%.
// All three right: 100%, 100%, 0%.
TEST(ScoreTable, TextColumns) {
  EXPECT_EQ(score_table({{"w.txt", counts(3, 3, 1, 1)}, {"ibm1 baseline", counts(3, 3, 3, 3)}}, false),
            "precision  recall     AER  alignment\n"
            "    33.33   33.33   66.67  w.txt\n"
            "   100.00  100.00    0.00  ibm1 baseline\n");
}

// |A| = 4, |S| = 4, |A∩S| = 1, |A∩P| = 2: precision 2/4 = 50%, recall 1/4 = 25%,
// AER = 1 − 3/8 = 62.5%.
TEST(ScoreTable, Json) {
  EXPECT_EQ(score_table({{"w.txt", counts(4, 4, 1, 2)}}, true),
            "[\n"
            " {\n"
            "  \"alignment\": \"w.txt\",\n"
            "  \"precision\": 50.0,\n"
            "  \"recall\": 25.0,\n"
            "  \"aer\": 62.5,\n"
            "  \"predicted\": 4,\n"
            "  \"sure\": 4,\n"
            "  \"predicted_in_sure\": 1,\n"
            "  \"predicted_in_possible\": 2\n"
            " }\n"
            "]\n");
}

TEST(ScoreTable, NoRows) {
  EXPECT_EQ(score_table({}, false), "precision  recall     AER  alignment\n");
  EXPECT_EQ(score_table({}, true), "[]\n");
}

// The mean row has nothing predicted and nothing sure: precision and recall 1, AER 0
// (alignment_score.h).
TEST(SweepTable, TextMarksTheBestOfEachLayer) {
  const std::vector<SweepRow> rows = {{0, 0, counts(4, 4, 1, 2), false},
                                      {0, kMeanOfHeads, counts(0, 0, 0, 0), true},
                                      {12, 3, counts(3, 3, 1, 1), true}};
  EXPECT_EQ(sweep_table(rows, false),
            "layer  head  precision  recall     AER\n"
            "    0     0      50.00   25.00   62.50\n"
            "    0  mean     100.00  100.00    0.00  *\n"
            "   12     3      33.33   33.33   66.67  *\n"
            "* the lowest AER of the layer\n");
}

TEST(SweepTable, JsonNamesTheMeanHead) {
  const std::vector<SweepRow> rows = {{1, 2, counts(4, 4, 1, 2), false}, {1, kMeanOfHeads, counts(2, 2, 2, 2), true}};
  EXPECT_EQ(sweep_table(rows, true),
            "[\n"
            " {\n"
            "  \"layer\": 1,\n"
            "  \"head\": 2,\n"
            "  \"precision\": 50.0,\n"
            "  \"recall\": 25.0,\n"
            "  \"aer\": 62.5,\n"
            "  \"predicted\": 4,\n"
            "  \"sure\": 4,\n"
            "  \"predicted_in_sure\": 1,\n"
            "  \"predicted_in_possible\": 2,\n"
            "  \"best_in_layer\": false\n"
            " },\n"
            " {\n"
            "  \"layer\": 1,\n"
            "  \"head\": \"mean\",\n"
            "  \"precision\": 100.0,\n"
            "  \"recall\": 100.0,\n"
            "  \"aer\": 0.0,\n"
            "  \"predicted\": 2,\n"
            "  \"sure\": 2,\n"
            "  \"predicted_in_sure\": 2,\n"
            "  \"predicted_in_possible\": 2,\n"
            "  \"best_in_layer\": true\n"
            " }\n"
            "]\n");
}

}  // namespace
}  // namespace attn::inspect
