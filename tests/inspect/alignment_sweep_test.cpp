// The layer and head sweep of `attn align --sweep` on two hand-made records, each head's links read
// off its matrix by hand and scored against a hand-written gold standard.
#include "inspect/alignment_sweep.h"

#include <functional>

#include <gtest/gtest.h>

#include "core/error.h"

namespace attn::inspect {
namespace {

AttentionMatrix cross(int layer, int head, int rows, int cols, std::vector<float> weights) {
  AttentionMatrix m;
  m.kind = AttentionKind::cross;
  m.layer = layer;
  m.head = head;
  m.rows = rows;
  m.cols = cols;
  m.weights = std::move(weights);
  return m;
}

// Record 1, "la casa" (▁la ▁ca sa </s>) → "the house" (▁the ▁house </s>). Word-level rows (source
// pieces ▁ca + sa summed, </s> dropped) and their argmax links, "source-target":
//   layer 0 head 0: the [0.5, 0.5] (tie → la), house [0, 1] → casa       0-0 1-1
//   layer 0 head 1: the [0, 1] → casa, house [1, 0] → la                 1-0 0-1
//   layer 0 mean:   the [0.25, 0.75] → casa, house [0.5, 0.5] → la       1-0 0-1
//   layer 1 head 0 (and its mean): the → la, house → casa                0-0 1-1
// Record 2, "sí" → "yes": every head links 0-0.
std::vector<AttentionRecord> records() {
  AttentionRecord casa;
  casa.line = 1;
  casa.source_pieces = {"▁la", "▁ca", "sa", "</s>"};
  casa.target_pieces = {"▁the", "▁house", "</s>"};
  casa.attention = {cross(0, 0, 3, 4, {0.5, 0.25, 0.25, 0, 0, 0.5, 0.5, 0, 0, 0, 0, 1}),
                    cross(0, 1, 3, 4, {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1}),
                    cross(1, 0, 3, 4, {1, 0, 0, 0, 0, 0.25, 0.75, 0, 0, 0, 0, 1})};
  AttentionRecord si;
  si.line = 2;
  si.source_pieces = {"▁sí", "</s>"};
  si.target_pieces = {"▁yes", "</s>"};
  for (auto [layer, head] : {std::pair{0, 0}, {0, 1}, {1, 0}})
    si.attention.push_back(cross(layer, head, 2, 2, {1, 0, 0, 1}));
  return {casa, si};
}

// Gold: line 1 "0-0 1-1", line 2 "0-0" (all sure, so P = S).
Gold gold() {
  Gold g;
  g.path = "gold.txt";
  g.links = {{{{0, 0}, {1, 1}}, {{0, 0}, {1, 1}}}, {{{0, 0}}, {{0, 0}}}};
  return g;
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Right links: |A| = 3 = |S|, all in S: AER 0. Head 1 and layer 0's mean: 3 links, only line 2's
// in S: AER = 1 − 2/6. Each layer's best is its lowest AER, the first of a tie.
TEST(AlignmentSweep, EveryHeadAndTheMeanOfEachLayer) {
  const std::vector<SweepRow> rows = sweep_layers_and_heads(records(), "a.jsonl", gold(), 0);
  ASSERT_EQ(rows.size(), 5u);
  const int expected[5][5] = {// layer, head, predicted, predicted_in_sure, best
                              {0, 0, 3, 3, 1},
                              {0, 1, 3, 1, 0},
                              {0, kMeanOfHeads, 3, 1, 0},
                              {1, 0, 3, 3, 1},
                              {1, kMeanOfHeads, 3, 3, 0}};
  for (int r = 0; r < 5; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(rows[r].layer, expected[r][0]);
    EXPECT_EQ(rows[r].head, expected[r][1]);
    EXPECT_EQ(rows[r].score.predicted, static_cast<std::size_t>(expected[r][2]));
    EXPECT_EQ(rows[r].score.sure, 3u);
    EXPECT_EQ(rows[r].score.predicted_in_sure, static_cast<std::size_t>(expected[r][3]));
    EXPECT_EQ(rows[r].score.predicted_in_possible, static_cast<std::size_t>(expected[r][3]));
    EXPECT_EQ(rows[r].best, expected[r][4] == 1);
  }
  EXPECT_DOUBLE_EQ(rows[1].score.aer(), 1 - 2.0 / 6);
}

// Threshold 0.5, layer 0 head 0: "the" reaches both la and casa (0.5 each), "house" casa: line 1
// has 0-0 1-0 1-1, line 2 0-0. |A| = 4, three of them sure.
TEST(AlignmentSweep, UsesTheThreshold) {
  const std::vector<SweepRow> rows = sweep_layers_and_heads(records(), "a.jsonl", gold(), 0.5);
  EXPECT_EQ(rows[0].score.predicted, 4u);
  EXPECT_EQ(rows[0].score.predicted_in_sure, 3u);
}

TEST(AlignmentSweep, ErrorsNameTheRecords) {
  EXPECT_EQ(message([] { sweep_layers_and_heads({}, "a.jsonl", gold(), 0); }), "a.jsonl: no records to sweep");
  std::vector<AttentionRecord> none = records();
  none[0].attention.clear();
  EXPECT_EQ(message([&] { sweep_layers_and_heads(none, "a.jsonl", gold(), 0); }),
            "a.jsonl:1: the record has no cross-attention");
  std::vector<AttentionRecord> short_of_a_layer = records();
  short_of_a_layer[1].attention.pop_back();  // line 2 loses layer 1
  EXPECT_EQ(message([&] { sweep_layers_and_heads(short_of_a_layer, "a.jsonl", gold(), 0); }).rfind("a.jsonl:2: ", 0),
            0u);
  Gold three_lines = gold();
  three_lines.links.push_back({});
  EXPECT_EQ(message([&] { sweep_layers_and_heads(records(), "a.jsonl", three_lines, 0); }),
            "gold.txt has 3 lines but a.jsonl has 2; they must have one line per sentence");
}

}  // namespace
}  // namespace attn::inspect
