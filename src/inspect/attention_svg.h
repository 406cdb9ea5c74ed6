#pragma once
// Pictures of attention as SVG text (docs/attention-pictures.md): a heatmap of one matrix, a grid
// of every head of a layer beside their mean, and the "lines" picture of the paper's appendix
// (Figures 3-5), where each query token is joined to each key token it attends to.
//
// Labels are the record's SentencePiece pieces as display_piece() shows them. Every label is its
// own <text> element with `unicode-bidi: isolate`, so a Hebrew or Arabic piece renders as itself
// (right to left) without reordering its neighbours on the axis.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/attention_record.h"
#include "core/xml_escape.h"

namespace attn::inspect {

// A matrix with more query or key tokens than this is refused (the picture would be unreadable
// and, as a PNG, several hundred megabytes of pixels).
inline constexpr int kMaxPictureTokens = 300;

// Heads are numbered from 0; this head number stands for the mean over a layer's heads.
inline constexpr int kMeanHead = kMeanOfHeads;

struct Rgb {
  int r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

// The sequential colour scale of every picture: white (#ffffff) at 0, dark blue (#08306b, the
// darkest of ColorBrewer's "Blues") at `max`, each channel interpolated linearly and rounded to the
// nearest integer (halves away from zero). Values are clamped to [0, max]; max <= 0 reads as 1.
Rgb heat_color(double value, double max);
inline constexpr Rgb kHeatLow{255, 255, 255}, kHeatHigh{8, 48, 107};

// "#rrggbb" (lower case).
std::string hex_color(Rgb color);

// The fixed qualitative palette of the lines picture, one colour per head (Tableau 10); head h gets
// entry h % size. The mean over heads is drawn in kMeanColor.
const std::vector<std::string>& head_palette();
inline constexpr std::string_view kMeanColor = "#333333";

// How a piece is labelled: the word-start mark "▁" is dropped ("▁In" -> "In"), a piece that goes
// on a word gets a leading "·" ("ning" -> "·ning"), "<s>", "</s>" and any other "<...>" stay as
// they are, and a piece that is only "▁" stays "▁". Labels longer than 32 characters are cut
// with "…".
std::string display_piece(std::string_view piece);

// Labels of the rows (queries) and columns (keys) of a matrix of this kind (see
// attention_record.h): cross = target × source, decoder_self = target × ("<s>", target[0..n-2]),
// encoder_self = source × source. Already passed through display_piece().
std::vector<std::string> query_labels(const AttentionRecord& record, AttentionKind kind);
std::vector<std::string> key_labels(const AttentionRecord& record, AttentionKind kind);

// The layers of this kind in the record, and the heads of one layer, ascending.
std::vector<int> layers_of(const AttentionRecord& record, AttentionKind kind);
std::vector<int> heads_of(const AttentionRecord& record, AttentionKind kind, int layer);

// The matrix of one head, or for head == kMeanHead the element-wise mean over the layer's heads
// (its `head` is kMeanHead). Throws Error naming the record's line and what the record does have.
AttentionMatrix select_matrix(const AttentionRecord& record, AttentionKind kind, int layer, int head);

// Throws Error if the matrix is larger than kMaxPictureTokens either way.
void check_drawable(const AttentionRecord& record, const AttentionMatrix& matrix);

// One matrix (a head, or the mean): cells coloured on heat_color(w, max of the matrix), query
// labels left, key labels on top (rotated -60°), a colour bar from 0 to that max, a title.
// Each cell is a <rect class="cell"> with a <title> tooltip "query → key: weight".
std::string heatmap_svg(const AttentionRecord& record, const AttentionMatrix& matrix);

// Every head of one layer and their mean as small heatmaps on one shared scale (0 to the largest
// weight of any head), each titled. Labels are drawn while a panel's cells are at least 7 px.
std::string head_grid_svg(const AttentionRecord& record, AttentionKind kind, int layer);

struct LinesOptions {
  std::vector<int> heads;  // heads to draw (kMeanHead for the mean); empty: every head of the layer
  int query = -1;          // only this query token (0-based row), or -1 for all of them
  double cutoff = 0.05;    // weights below this are not drawn
};

// The paper's Figures 3-5 turned on their side: query tokens in a left column, key tokens in a
// right column (both horizontal, so long sentences stay readable), a line from each query to each
// key with stroke opacity = weight, one colour per head, and a legend of the heads.
std::string lines_svg(const AttentionRecord& record, AttentionKind kind, int layer, const LinesOptions& options);

}  // namespace attn::inspect
