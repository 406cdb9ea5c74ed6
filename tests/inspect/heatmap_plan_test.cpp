// The pictures `attn heatmap` plans for hand-made records, and their file names, as
// docs/attention-pictures.md names them: line-L.KIND.layer-N. then head-H, grid, or lines.head-H.
#include "inspect/heatmap_plan.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "inspect/attention_svg.h"

namespace attn::inspect {
namespace {

// Line `line`: "a" → "b" (one piece and </s> a side), cross-attention of layers 0 and 1, heads 0
// and 1 each: 2 × 2 matrices.
AttentionRecord record(std::int64_t line) {
  AttentionRecord r;
  r.line = line;
  r.source_pieces = {"▁a", "</s>"};
  r.target_pieces = {"▁b", "</s>"};
  for (int layer : {0, 1}) {
    for (int head : {0, 1}) {
      AttentionMatrix m;
      m.layer = layer;
      m.head = head;
      m.rows = m.cols = 2;
      m.weights = {1, 0, 0.5f, 0.5f};
      r.attention.push_back(m);
    }
  }
  return r;
}

PicturePlanOptions options() {
  PicturePlanOptions o;
  o.origin = "a.jsonl";
  return o;
}

std::vector<std::string> stems(const std::vector<Picture>& pictures) {
  std::vector<std::string> names;
  for (const Picture& p : pictures) names.push_back(p.stem);
  return names;
}

std::string problem(const std::vector<AttentionRecord>& records, const PicturePlanOptions& o) {
  try {
    plan_pictures(records, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HeatmapPlan, DefaultIsTheMeanOfTheLastLayerOfEveryRecord) {
  AttentionRecord empty_line;  // an empty input line: a record without matrices, not drawn
  empty_line.line = 2;
  const std::vector<AttentionRecord> records = {record(1), empty_line, record(3)};
  const std::vector<Picture> pictures = plan_pictures(records, options());
  EXPECT_EQ(stems(pictures),
            (std::vector<std::string>{"line-1.cross.layer-1.head-mean", "line-3.cross.layer-1.head-mean"}));
  EXPECT_EQ(pictures[1].record, &records[2]);
  EXPECT_EQ(pictures[1].layer, 1);
  EXPECT_EQ(pictures[1].heads, (std::vector<int>{kMeanHead}));
}

TEST(HeatmapPlan, EveryLayerAndHeadOfTheChosenLines) {
  const std::vector<AttentionRecord> records = {record(1), record(3)};
  PicturePlanOptions o = options();
  o.lines = {3, 3};  // a line asked twice is drawn once
  o.layer = "all";
  o.head = "all";
  EXPECT_EQ(stems(plan_pictures(records, o)),
            (std::vector<std::string>{"line-3.cross.layer-0.head-0", "line-3.cross.layer-0.head-1",
                                      "line-3.cross.layer-1.head-0", "line-3.cross.layer-1.head-1"}));
  o.layer = "0";
  o.head = "1";
  EXPECT_EQ(stems(plan_pictures(records, o)), (std::vector<std::string>{"line-3.cross.layer-0.head-1"}));
}

TEST(HeatmapPlan, GridAndLinesNames) {
  const std::vector<AttentionRecord> records = {record(7)};
  PicturePlanOptions o = options();
  o.style = PictureStyle::grid;
  o.layer = "0";
  std::vector<Picture> pictures = plan_pictures(records, o);
  EXPECT_EQ(stems(pictures), (std::vector<std::string>{"line-7.cross.layer-0.grid"}));
  EXPECT_TRUE(pictures[0].heads.empty());

  o.style = PictureStyle::lines;  // every head by default
  pictures = plan_pictures(records, o);
  EXPECT_EQ(stems(pictures), (std::vector<std::string>{"line-7.cross.layer-0.lines.head-all"}));
  EXPECT_EQ(pictures[0].heads, (std::vector<int>{0, 1}));
  o.head = "mean";
  o.word = 1;
  pictures = plan_pictures(records, o);
  EXPECT_EQ(stems(pictures), (std::vector<std::string>{"line-7.cross.layer-0.lines.head-mean.word-1"}));
  EXPECT_EQ(pictures[0].heads, (std::vector<int>{kMeanHead}));
  o.head = "1";
  o.word = -1;
  EXPECT_EQ(stems(plan_pictures(records, o)), (std::vector<std::string>{"line-7.cross.layer-0.lines.head-1"}));
}

TEST(HeatmapPlan, RecordsThatAreNotThere) {
  PicturePlanOptions o = options();
  o.lines = {9};
  EXPECT_EQ(problem({record(1), record(3)}, o), "a.jsonl has no record for line 9 (it has lines 1, 3)");
  EXPECT_EQ(problem({}, o), "a.jsonl has no record for line 9 (it is empty)");
  std::vector<AttentionRecord> eleven;
  for (int line = 1; line <= 11; ++line) eleven.push_back(record(line));
  o.lines = {12};  // the message lists the first ten lines
  EXPECT_EQ(problem(eleven, o), "a.jsonl has no record for line 12 (it has lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...)");
  EXPECT_EQ(problem({}, options()), "a.jsonl: no attention records");
  EXPECT_EQ(problem({record(4), record(4)}, options()),
            "a.jsonl has more than one record for line 4; choose one with --line (pictures are named by line)");
}

TEST(HeatmapPlan, OptionsThatDoNotApply) {
  const std::vector<AttentionRecord> records = {record(1)};
  PicturePlanOptions o = options();
  o.layer = "x";
  EXPECT_EQ(problem(records, o), "--layer: 'x' is not a number (or all, last)");
  o = options();
  o.head = "-1";
  EXPECT_EQ(problem(records, o), "--head: '-1' is not a number (or mean, all)");
  o = options();
  o.style = PictureStyle::grid;
  o.head = "0";
  EXPECT_EQ(problem(records, o), "--head does not apply to --style grid (a grid shows every head and their mean)");
  o = options();
  o.word = 0;
  EXPECT_EQ(problem(records, o), "--word applies to --style lines only");
  o = options();
  o.cutoff = 0.1;
  EXPECT_EQ(problem(records, o), "--cutoff applies to --style lines only");
  o = options();
  o.style = PictureStyle::lines;
  o.word = 2;  // two query tokens: 0 and 1
  EXPECT_EQ(problem(records, o), "line 1: --word 2: the cross attention has 2 query tokens (0-1)");
}

TEST(HeatmapPlan, TooManyPictures) {
  PicturePlanOptions o = options();
  o.layer = "all";
  o.head = "all";
  o.max_pictures = 3;  // 2 layers × 2 heads
  EXPECT_EQ(problem({record(1)}, o),
            "this would draw 4 pictures, more than --max-pictures 3; choose fewer with --line, --layer or --head, "
            "or raise --max-pictures");
  o.max_pictures = 4;
  EXPECT_EQ(problem({record(1)}, o), "");
}

TEST(HeatmapPlan, ResolveLayers) {
  EXPECT_EQ(resolve_layers(record(1), AttentionKind::cross, "last"), (std::vector<int>{1}));
  EXPECT_EQ(resolve_layers(record(1), AttentionKind::cross, "all"), (std::vector<int>{0, 1}));
  EXPECT_EQ(resolve_layers(record(1), AttentionKind::cross, "5"), (std::vector<int>{5}));
  try {
    resolve_layers(record(1), AttentionKind::decoder_self, "last");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "line 1: the record has no decoder_self attention");
  }
}

TEST(HeatmapPlan, Styles) {
  EXPECT_EQ(parse_picture_style("heatmap"), PictureStyle::heatmap);
  EXPECT_EQ(parse_picture_style("grid"), PictureStyle::grid);
  EXPECT_EQ(parse_picture_style("lines"), PictureStyle::lines);
  try {
    parse_picture_style("bars");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--style: unknown style 'bars' (known: heatmap, grid, lines)");
  }
}

}  // namespace
}  // namespace attn::inspect
