#pragma once
// Which pictures `attn heatmap` draws (docs/attention-pictures.md): the records, layers and heads
// its options choose, each checked before any file is written, and the file name of each picture.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inspect/attention_record.h"

namespace attn::inspect {

enum class PictureStyle { heatmap, grid, lines };

// "heatmap", "grid" or "lines"; anything else throws Error naming them.
PictureStyle parse_picture_style(const std::string& style);

struct PicturePlanOptions {
  std::string origin;               // the records' file, named in errors
  std::vector<std::int64_t> lines;  // records to draw by input line; empty: every record with attention
  AttentionKind kind = AttentionKind::cross;
  PictureStyle style = PictureStyle::heatmap;
  std::string layer = "last";    // a layer number, "last" or "all"
  std::string head;              // a head number, "mean" or "all"; "": mean, or all for lines
  int word = -1;                 // lines: only this query token (>= 0)
  std::optional<double> cutoff;  // lines: leave out weights below this
  int max_pictures = 100;        // refuse to plan more pictures than this
};

// One picture to draw: which record, layer, heads, and the file name without its extension,
// "line-L.KIND.layer-N." then "head-H" (heatmap), "grid", or "lines.head-H" (+ ".word-W").
struct Picture {
  const AttentionRecord* record = nullptr;
  int layer = 0;
  std::vector<int> heads;  // heatmap: one head (or kMeanHead); lines: those drawn; grid: unused
  std::string stem;
};

// The layers `layer` ("all", "last" or a number) names in a record. Throws Error if the record has
// no attention of this kind; a number is not checked against the record here.
std::vector<int> resolve_layers(const AttentionRecord& record, AttentionKind kind, const std::string& layer);

// Every picture the options ask for, in record, layer, head order. Throws Error, before anything is
// drawn, for a line without a record (or with two), a layer or head the record lacks, a matrix too
// large to draw, a --word past the query tokens, an option that does not apply to the style, or
// more pictures than max_pictures. The pictures point into `records`.
std::vector<Picture> plan_pictures(const std::vector<AttentionRecord>& records, const PicturePlanOptions& options);

// The SVG of one planned picture.
std::string draw_picture(const Picture& picture, const PicturePlanOptions& options);

}  // namespace attn::inspect
