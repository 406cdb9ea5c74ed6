// The attention pictures as SVG text: colours, cells, labels, escaping, the grid and the lines,
// each checked against values worked out by hand.
#include "inspect/attention_svg.h"

#include <gtest/gtest.h>
#include <librsvg/rsvg.h>

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "core/error.h"

namespace attn::inspect {
namespace {

// Hand-computed colours of the scale white (255,255,255) -> (8,48,107), t = value / max:
//  t = 0.5:  255 - 0.5 * 247 = 131.5 -> 132, 255 - 0.5 * 207 = 151.5 -> 152, 255 - 0.5 * 148 = 181
//  t = 0.25: 255 - 61.75 = 193.25 -> 193,  255 - 51.75 = 203.25 -> 203,    255 - 37 = 218
const std::string kWhite = "#ffffff", kHalf = "#8498b5", kQuarter = "#c1cbda", kFull = "#08306b";

AttentionMatrix matrix(AttentionKind kind, int layer, int head, int rows, int cols, std::vector<float> weights) {
  AttentionMatrix m;
  m.kind = kind;
  m.layer = layer;
  m.head = head;
  m.rows = rows;
  m.cols = cols;
  m.weights = std::move(weights);
  return m;
}

// Source "<&> שלום </s>" (3 keys), target "a </s>" (2 queries); cross layer 0 with two heads.
AttentionRecord two_by_three() {
  AttentionRecord r;
  r.line = 7;
  r.source_pieces = {"\u2581<&>", "\u2581\u05e9\u05dc\u05d5\u05dd", "</s>"};
  r.target_pieces = {"\u2581a", "</s>"};
  r.attention.push_back(matrix(AttentionKind::cross, 0, 0, 2, 3, {0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 1.0f}));
  r.attention.push_back(matrix(AttentionKind::cross, 0, 1, 2, 3, {0.5f, 0.5f, 0.0f, 0.0f, 0.5f, 0.5f}));
  return r;
}

std::vector<std::string> all_matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> found;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    found.push_back((*it)[1].str());
  return found;
}

std::vector<std::string> cell_fills(const std::string& svg) {
  return all_matches(svg, "<rect class=\"cell\"[^>]* fill=\"(#[0-9a-f]{6})\"");
}

// librsvg refuses malformed XML, so a handle means the text parsed.
bool parses_as_svg(const std::string& svg) {
  GError* error = nullptr;
  RsvgHandle* handle = rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error);
  if (error) {
    ADD_FAILURE() << error->message;
    g_error_free(error);
  }
  if (!handle) return false;
  g_object_unref(handle);
  return true;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AttentionSvg, ColourScaleAtZeroMidpointAndMax) {
  EXPECT_EQ(heat_color(0, 1), (Rgb{255, 255, 255}));
  EXPECT_EQ(heat_color(1, 1), (Rgb{8, 48, 107}));
  EXPECT_EQ(heat_color(0.5, 1), (Rgb{132, 152, 181}));
  EXPECT_EQ(heat_color(1, 2), (Rgb{132, 152, 181}));
  EXPECT_EQ(heat_color(0.25, 1), (Rgb{193, 203, 218}));
  EXPECT_EQ(heat_color(3, 2), (Rgb{8, 48, 107}));       // above max: clamped
  EXPECT_EQ(heat_color(-1, 2), (Rgb{255, 255, 255}));   // below 0: clamped
  EXPECT_EQ(heat_color(0.5, 0), (Rgb{132, 152, 181}));  // max 0 reads as 1
  EXPECT_EQ(hex_color({132, 152, 181}), kHalf);
  EXPECT_EQ(hex_color({8, 48, 107}), kFull);
}

TEST(AttentionSvg, EscapesXml) { EXPECT_EQ(xml_escape("a&b<c>d\"e'f\u05e9"), "a&amp;b&lt;c&gt;d&quot;e&apos;f\u05e9"); }

TEST(AttentionSvg, DisplayedPieces) {
  EXPECT_EQ(display_piece("\u2581In"), "In");
  EXPECT_EQ(display_piece("ning"), "\u00b7ning");
  EXPECT_EQ(display_piece("</s>"), "</s>");
  EXPECT_EQ(display_piece("<s>"), "<s>");
  EXPECT_EQ(display_piece("\u2581"), "\u2581");
  EXPECT_EQ(display_piece("\u2581\u05e9\u05dc\u05d5\u05dd"), "\u05e9\u05dc\u05d5\u05dd");
  EXPECT_EQ(display_piece("\u2581" + std::string(40, 'x')), std::string(32, 'x') + "\u2026");
}

TEST(AttentionSvg, LabelsOfEachKind) {
  AttentionRecord r = two_by_three();
  EXPECT_EQ(query_labels(r, AttentionKind::cross), (std::vector<std::string>{"a", "</s>"}));
  EXPECT_EQ(key_labels(r, AttentionKind::cross), (std::vector<std::string>{"<&>", "\u05e9\u05dc\u05d5\u05dd", "</s>"}));
  // The decoder reads <s> and every target piece but the last.
  EXPECT_EQ(key_labels(r, AttentionKind::decoder_self), (std::vector<std::string>{"<s>", "a"}));
  EXPECT_EQ(query_labels(r, AttentionKind::encoder_self), key_labels(r, AttentionKind::encoder_self));
}

TEST(AttentionSvg, MeanOverHeads) {
  const AttentionMatrix mean = select_matrix(two_by_three(), AttentionKind::cross, 0, kMeanHead);
  EXPECT_EQ(mean.head, kMeanHead);
  EXPECT_EQ(mean.weights, (std::vector<float>{0.5f, 0.375f, 0.125f, 0.0f, 0.25f, 0.75f}));
  EXPECT_EQ(select_matrix(two_by_three(), AttentionKind::cross, 0, 1).weights[1], 0.5f);
}

TEST(AttentionSvg, MissingLayerOrHeadNamesWhatThereIs) {
  const AttentionRecord r = two_by_three();
  EXPECT_EQ(error_of([&] { select_matrix(r, AttentionKind::cross, 4, 0); }),
            "line 7: no cross-attention layer 4 (the record has layers 0)");
  EXPECT_EQ(error_of([&] { select_matrix(r, AttentionKind::cross, 0, 2); }),
            "line 7: no head 2 in cross-attention layer 0 (it has heads 0, 1)");
  EXPECT_EQ(error_of([&] { select_matrix(r, AttentionKind::encoder_self, 0, 0); }),
            "line 7: no encoder self-attention layer 0 (the record has no encoder self-attention)");
}

TEST(AttentionSvg, HeatmapHasOneCellPerWeightInTheScaleOfItsMax) {
  const AttentionRecord r = two_by_three();
  const std::string svg = heatmap_svg(r, r.attention[0]);
  EXPECT_EQ(cell_fills(svg), (std::vector<std::string>{kHalf, kQuarter, kQuarter, kWhite, kWhite, kFull}));
  // Head 1's largest weight is 0.5, so its own picture draws 0.5 in the darkest colour.
  EXPECT_EQ(cell_fills(heatmap_svg(r, r.attention[1])),
            (std::vector<std::string>{kFull, kFull, kWhite, kWhite, kFull, kFull}));
  EXPECT_TRUE(parses_as_svg(svg));
  EXPECT_NE(svg.find("line 7 \u2014 cross-attention, layer 0, head 0"), std::string::npos);
  EXPECT_NE(svg.find("font-family=\"'DejaVu Sans', "), std::string::npos);
  EXPECT_NE(svg.find(">0<"), std::string::npos);  // colour bar from 0 ...
  EXPECT_NE(svg.find(">1<"), std::string::npos);  // ... to the max
}

TEST(AttentionSvg, LabelsAreEscapedAndRightToLeftOnesIsolated) {
  const AttentionRecord r = two_by_three();
  for (const std::string& svg : {heatmap_svg(r, r.attention[0]), head_grid_svg(r, AttentionKind::cross, 0),
                                 lines_svg(r, AttentionKind::cross, 0, {})}) {
    EXPECT_NE(svg.find(">&lt;&amp;&gt;</text>"), std::string::npos);
    EXPECT_EQ(svg.find("<&>"), std::string::npos);
    EXPECT_NE(svg.find("unicode-bidi:isolate\">\u05e9\u05dc\u05d5\u05dd</text>"), std::string::npos);
    EXPECT_TRUE(parses_as_svg(svg));
  }
}

TEST(AttentionSvg, RefusesMatricesOverTheLimit) {
  AttentionRecord r;
  r.line = 2;
  r.source_pieces = {"\u2581a", "</s>"};
  r.target_pieces.assign(kMaxPictureTokens + 1, "\u2581b");
  r.attention.push_back(matrix(AttentionKind::cross, 0, 0, kMaxPictureTokens + 1, 2,
                               std::vector<float>(2 * (kMaxPictureTokens + 1), 0.5f)));
  const std::string expected =
      "line 2: cross-attention is 301 \u00d7 2 tokens, too long to draw (pictures are "
      "limited to 300 \u00d7 300)";
  EXPECT_EQ(error_of([&] { heatmap_svg(r, r.attention[0]); }), expected);
  EXPECT_EQ(error_of([&] { head_grid_svg(r, AttentionKind::cross, 0); }), expected);
  EXPECT_EQ(error_of([&] { lines_svg(r, AttentionKind::cross, 0, {}); }), expected);
}

TEST(AttentionSvg, GridSharesOneScaleAcrossHeadsAndMean) {
  const std::string svg = head_grid_svg(two_by_three(), AttentionKind::cross, 0);
  // Shared max 1: head 0 as in its own picture, head 1's 0.5 is the midpoint colour, and the mean
  // (0.5, 0.375, 0.125 / 0, 0.25, 0.75): 0.375 -> 255 - 92.625 = 162.375 -> 162 (a2),
  // 255 - 77.625 = 177.375 -> 177 (b1), 255 - 55.5 = 199.5 -> 200 (c8); 0.125 -> 255 - 30.875 =
  // 224.125 -> 224 (e0), 255 - 25.875 = 229.125 -> 229 (e5), 255 - 18.5 = 236.5 -> 237 (ed);
  // 0.75 -> 255 - 185.25 = 69.75 -> 70 (46), 255 - 155.25 = 99.75 -> 100 (64), 255 - 111 = 144 (90).
  EXPECT_EQ(cell_fills(svg),
            (std::vector<std::string>{kHalf, kQuarter, kQuarter, kWhite, kWhite, kFull,             // head 0
                                      kHalf, kHalf, kWhite, kWhite, kHalf, kHalf,                   // head 1
                                      kHalf, "#a2b1c8", "#e0e5ed", kWhite, kQuarter, "#466490"}));  // mean
  EXPECT_NE(svg.find(">head 0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">head 1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">mean</text>"), std::string::npos);
  EXPECT_TRUE(parses_as_svg(svg));
}

TEST(AttentionSvg, LinesDrawOnlyWeightsAboveTheCutoffWithOpacityWeight) {
  const AttentionRecord r = two_by_three();
  LinesOptions options;
  options.heads = {0};
  options.cutoff = 0.3;
  // Head 0 above 0.3: (a -> <&>) 0.5 and (</s> -> </s>) 1.
  std::string svg = lines_svg(r, AttentionKind::cross, 0, options);
  EXPECT_EQ(all_matches(svg, "stroke-opacity=\"([0-9.]+)\""), (std::vector<std::string>{"0.500", "1.000"}));
  EXPECT_NE(svg.find("<g class=\"head\" stroke=\"" + head_palette()[0] + "\""), std::string::npos);
  EXPECT_TRUE(parses_as_svg(svg));

  // Every head (the default), the default cutoff 0.05: head 0 draws 4 lines, head 1 four.
  svg = lines_svg(r, AttentionKind::cross, 0, {});
  EXPECT_EQ(all_matches(svg, "stroke-opacity=\"([0-9.]+)\"").size(), 8u);
  EXPECT_NE(svg.find("stroke=\"" + head_palette()[1] + "\""), std::string::npos);
  EXPECT_NE(svg.find(">head 1</text>"), std::string::npos);  // legend

  // Only the query "</s>" (row 1): head 0's 1 and head 1's two halves.
  options = LinesOptions{};
  options.query = 1;
  svg = lines_svg(r, AttentionKind::cross, 0, options);
  EXPECT_EQ(all_matches(svg, "stroke-opacity=\"([0-9.]+)\""), (std::vector<std::string>{"1.000", "0.500", "0.500"}));

  options.heads = {kMeanHead};
  svg = lines_svg(r, AttentionKind::cross, 0, options);
  EXPECT_EQ(all_matches(svg, "stroke-opacity=\"([0-9.]+)\""), (std::vector<std::string>{"0.250", "0.750"}));
  EXPECT_NE(svg.find("stroke=\"" + std::string(kMeanColor) + "\""), std::string::npos);

  options.query = 2;
  EXPECT_EQ(error_of([&] { lines_svg(r, AttentionKind::cross, 0, options); }),
            "line 7: query token 2 is out of range: cross-attention has 2 query tokens (0-1)");
}

TEST(AttentionSvg, PaletteHasAtLeastEightDistinctColours) {
  const auto& palette = head_palette();
  ASSERT_GE(palette.size(), 8u);
  for (std::size_t i = 0; i < palette.size(); ++i)
    for (std::size_t j = i + 1; j < palette.size(); ++j) EXPECT_NE(palette[i], palette[j]);
}

}  // namespace
}  // namespace attn::inspect
