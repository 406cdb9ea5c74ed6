#include "inspect/attention_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/number_format.h"
#include "core/error.h"
#include "core/utf8.h"
#include "inspect/attention_svg_internal.h"

namespace attn::inspect {

namespace svg_detail {

std::string num(double v) {
  std::string s = format_fixed(v, 1);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

double text_width(std::string_view text, double font_size) {
  double em = 0;
  for (std::size_t i = 0; i < text.size();) {
    const DecodedCodePoint d = decode_utf8_at(text, i);
    const char32_t cp = d.code_point;
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0x20000 && cp <= 0x3FFFD);
    em += wide ? 1.0 : 0.62;
    i += d.length;
  }
  return em * font_size;
}

std::string svg_open(double width, double height) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(std::ceil(width)) + "\" height=\"" +
         num(std::ceil(height)) + "\" viewBox=\"0 0 " + num(std::ceil(width)) + " " + num(std::ceil(height)) +
         "\" font-family=\"" + kFontFamily +
         "\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

std::string text_element(const std::string& attributes, std::string_view text) {
  return "<text " + attributes + " unicode-bidi=\"isolate\" style=\"unicode-bidi:isolate\">" + xml_escape(text) +
         "</text>\n";
}

std::string kind_title(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::cross:
      return "cross-attention";
    case AttentionKind::decoder_self:
      return "decoder self-attention";
    case AttentionKind::encoder_self:
      return "encoder self-attention";
  }
  return "attention";
}

std::string axes_caption(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::cross:
      return "rows: target pieces (queries) \u00b7 columns: source pieces (keys)";
    case AttentionKind::decoder_self:
      return "rows: the target piece each step predicted \u00b7 columns: decoder inputs (keys)";
    case AttentionKind::encoder_self:
      return "rows: source pieces (queries) \u00b7 columns: source pieces (keys)";
  }
  return "";
}

}  // namespace svg_detail

using namespace svg_detail;

Rgb heat_color(double value, double max) {
  if (!(max > 0)) max = 1;
  const double t = std::isnan(value) ? 0 : std::clamp(value / max, 0.0, 1.0);
  auto mix = [t](int lo, int hi) { return static_cast<int>(std::lround(lo + t * (hi - lo))); };
  return {mix(kHeatLow.r, kHeatHigh.r), mix(kHeatLow.g, kHeatHigh.g), mix(kHeatLow.b, kHeatHigh.b)};
}

std::string hex_color(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r & 0xFF, c.g & 0xFF, c.b & 0xFF);
  return buf;
}

const std::vector<std::string>& head_palette() {
  static const std::vector<std::string> palette{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return palette;
}

std::string display_piece(std::string_view piece) {
  static constexpr std::string_view kWordStart = "\u2581";
  std::string label;
  if (piece == kWordStart || piece.empty()) {
    label = std::string(piece);
  } else if (piece.substr(0, kWordStart.size()) == kWordStart) {
    label = std::string(piece.substr(kWordStart.size()));
  } else if (piece.size() >= 3 && piece.front() == '<' && piece.back() == '>') {
    label = std::string(piece);
  } else {
    label = "\u00b7" + std::string(piece);
  }
  // Cut after 32 code points.
  std::size_t count = 0;
  for (std::size_t i = 0; i < label.size(); ++i) {
    if ((static_cast<unsigned char>(label[i]) & 0xC0) == 0x80) continue;
    if (++count > 32) return label.substr(0, i) + "\u2026";
  }
  return label;
}

namespace {

std::vector<std::string> displayed(const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) out.push_back(display_piece(p));
  return out;
}

std::string list_numbers(const std::vector<int>& v) {
  if (v.empty()) return "none";
  bool contiguous = true;
  for (std::size_t i = 1; i < v.size(); ++i) contiguous = contiguous && v[i] == v[i - 1] + 1;
  if (contiguous && v.size() > 2) return std::to_string(v.front()) + "-" + std::to_string(v.back());
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

std::string record_name(const AttentionRecord& record) { return "line " + std::to_string(record.line); }

std::string fmt_weight(double w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", w);
  return buf;
}

std::string head_name(int head) { return head == kMeanHead ? "mean" : "head " + std::to_string(head); }

}  // namespace

std::vector<std::string> query_labels(const AttentionRecord& record, AttentionKind kind) {
  return displayed(kind == AttentionKind::encoder_self ? record.source_pieces : record.target_pieces);
}

std::vector<std::string> key_labels(const AttentionRecord& record, AttentionKind kind) {
  if (kind == AttentionKind::decoder_self) {
    std::vector<std::string> inputs{"<s>"};
    for (std::size_t i = 0; i + 1 < record.target_pieces.size(); ++i) inputs.push_back(record.target_pieces[i]);
    return displayed(inputs);
  }
  return displayed(record.source_pieces);  // cross and encoder_self
}

std::vector<int> layers_of(const AttentionRecord& record, AttentionKind kind) {
  std::set<int> layers;
  for (const auto& m : record.attention)
    if (m.kind == kind) layers.insert(m.layer);
  return {layers.begin(), layers.end()};
}

std::vector<int> heads_of(const AttentionRecord& record, AttentionKind kind, int layer) {
  std::set<int> heads;
  for (const auto& m : record.attention)
    if (m.kind == kind && m.layer == layer) heads.insert(m.head);
  return {heads.begin(), heads.end()};
}

AttentionMatrix select_matrix(const AttentionRecord& record, AttentionKind kind, int layer, int head) {
  const std::vector<int> heads = heads_of(record, kind, layer);
  if (heads.empty()) {
    const std::vector<int> layers = layers_of(record, kind);
    throw Error(record_name(record) + ": no " + kind_title(kind) + " layer " + std::to_string(layer) +
                (layers.empty() ? " (the record has no " + kind_title(kind) + ")"
                                : " (the record has layers " + list_numbers(layers) + ")"));
  }
  if (head != kMeanHead && !std::binary_search(heads.begin(), heads.end(), head)) {
    throw Error(record_name(record) + ": no head " + std::to_string(head) + " in " + kind_title(kind) + " layer " +
                std::to_string(layer) + " (it has heads " + list_numbers(heads) + ")");
  }
  std::vector<const AttentionMatrix*> matrices;
  for (const auto& m : record.attention) {
    if (m.kind != kind || m.layer != layer) continue;
    if (head != kMeanHead) {
      if (m.head == head) return m;
      continue;
    }
    matrices.push_back(&m);
  }
  return mean_of_heads(matrices,
                       record_name(record) + ": the heads of " + kind_title(kind) + " layer " + std::to_string(layer));
}

void check_drawable(const AttentionRecord& record, const AttentionMatrix& m) {
  if (m.rows > kMaxPictureTokens || m.cols > kMaxPictureTokens) {
    throw Error(record_name(record) + ": " + kind_title(m.kind) + " is " + std::to_string(m.rows) + " \u00d7 " +
                std::to_string(m.cols) + " tokens, too long to draw (pictures are limited to " +
                std::to_string(kMaxPictureTokens) + " \u00d7 " + std::to_string(kMaxPictureTokens) + ")");
  }
  if (m.rows < 1 || m.cols < 1 || m.weights.size() != static_cast<std::size_t>(m.rows) * m.cols)
    throw Error(record_name(record) + ": " + kind_title(m.kind) + " matrix has no cells or the wrong number");
}

namespace {

// One matrix drawn at (x0, y0) = its top-left cell corner, with labels left and above.
struct Panel {
  int cell = 12;
  double font = 9;
  bool labels = true;
  double row_label_w = 0, col_label_h = 0, col_overhang = 0;
};

constexpr double kSin60 = 0.8660254037844386;

Panel layout_panel(const std::vector<std::string>& rows, const std::vector<std::string>& cols, int cell, double font,
                   bool labels) {
  Panel p{cell, font, labels, 0, 0, 0};
  if (!labels) return p;
  double rw = 0, cw = 0;
  for (const auto& s : rows) rw = std::max(rw, text_width(s, font));
  for (const auto& s : cols) cw = std::max(cw, text_width(s, font));
  p.row_label_w = rw + 6;
  p.col_label_h = cw * kSin60 + 8;
  p.col_overhang = std::max(0.0, cw * 0.5 - cell / 2.0);
  return p;
}

std::string draw_cells(const AttentionMatrix& m, const std::vector<std::string>& rows,
                       const std::vector<std::string>& cols, const Panel& p, double x0, double y0, double max) {
  std::string out;
  for (int r = 0; r < m.rows; ++r) {
    for (int c = 0; c < m.cols; ++c) {
      const double w = m.at(r, c);
      out += "<rect class=\"cell\" x=\"" + num(x0 + c * p.cell) + "\" y=\"" + num(y0 + r * p.cell) + "\" width=\"" +
             std::to_string(p.cell) + "\" height=\"" + std::to_string(p.cell) + "\" fill=\"" +
             hex_color(heat_color(w, max)) + "\"><title>" + xml_escape(rows[r]) + " \u2192 " + xml_escape(cols[c]) +
             ": " + fmt_weight(w) + "</title></rect>\n";
    }
  }
  out += "<rect x=\"" + num(x0 - 0.5) + "\" y=\"" + num(y0 - 0.5) + "\" width=\"" + num(m.cols * p.cell + 1.0) +
         "\" height=\"" + num(m.rows * p.cell + 1.0) + "\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\"/>\n";
  if (!p.labels) return out;
  const std::string fs = "font-size=\"" + num(p.font) + "\"";
  for (int r = 0; r < m.rows; ++r)
    out += text_element("x=\"" + num(x0 - 5) + "\" y=\"" + num(y0 + (r + 0.5) * p.cell + p.font * 0.35) +
                            "\" text-anchor=\"end\" " + fs,
                        rows[r]);
  for (int c = 0; c < m.cols; ++c) {
    const double x = x0 + (c + 0.5) * p.cell + p.font * 0.3, y = y0 - 5;
    out += text_element("transform=\"translate(" + num(x) + "," + num(y) + ") rotate(-60)\" " + fs, cols[c]);
  }
  return out;
}

// A vertical bar from heat_color(0) at the bottom to heat_color(max) at the top, labelled.
std::string colour_bar(double x, double y, double height, double max) {
  const std::string id = "heat-scale";
  std::string out = "<defs><linearGradient id=\"" + id +
                    "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">"
                    "<stop offset=\"0\" stop-color=\"" +
                    hex_color(heat_color(0, max)) + "\"/><stop offset=\"1\" stop-color=\"" +
                    hex_color(heat_color(max, max)) + "\"/></linearGradient></defs>\n";
  out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"14\" height=\"" + num(height) + "\" fill=\"url(#" +
         id + ")\" stroke=\"#888\"/>\n";
  out += "<text x=\"" + num(x + 20) + "\" y=\"" + num(y + 4) + "\" font-size=\"11\">" + fmt_weight(max) + "</text>\n";
  out += "<text x=\"" + num(x + 20) + "\" y=\"" + num(y + height / 2 + 4) + "\" font-size=\"11\" fill=\"#666\">" +
         fmt_weight(max / 2) + "</text>\n";
  out += "<text x=\"" + num(x + 20) + "\" y=\"" + num(y + height + 4) + "\" font-size=\"11\">0</text>\n";
  return out;
}

double max_weight(const AttentionMatrix& m) {
  double max = 0;
  for (float w : m.weights) max = std::max(max, static_cast<double>(w));
  return max;
}

std::string title_block(const std::string& title, const std::string& caption, double x) {
  return "<text x=\"" + num(x) + "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" + xml_escape(title) +
         "</text>\n<text x=\"" + num(x) + "\" y=\"40\" font-size=\"11\" fill=\"#555\">" + xml_escape(caption) +
         "</text>\n";
}

}  // namespace

std::string heatmap_svg(const AttentionRecord& record, const AttentionMatrix& m) {
  check_drawable(record, m);
  const std::vector<std::string> rows = query_labels(record, m.kind), cols = key_labels(record, m.kind);
  if (static_cast<int>(rows.size()) != m.rows || static_cast<int>(cols.size()) != m.cols)
    throw Error(record_name(record) + ": " + kind_title(m.kind) + " matrix does not match the record's pieces");
  const int n = std::max(m.rows, m.cols);
  const int cell = std::clamp(640 / n, 12, 32);
  const double font = std::clamp(cell * 0.6, 9.0, 13.0);
  const Panel p = layout_panel(rows, cols, cell, font, true);
  const std::string title = record_name(record) + " \u2014 " + kind_title(m.kind) + ", layer " +
                            std::to_string(m.layer) + ", " +
                            (m.head == kMeanHead ? std::string("mean over heads") : head_name(m.head));
  const std::string caption = axes_caption(m.kind);
  const double margin = 16, header = 52;
  const double x0 = std::ceil(margin + p.row_label_w), y0 = std::ceil(header + p.col_label_h);
  const double grid_w = m.cols * cell, grid_h = m.rows * cell;
  const double bar_h = std::clamp(grid_h, 100.0, 400.0);
  const double bar_x = x0 + grid_w + std::max(20.0, p.col_overhang + 8);
  const double width =
      std::max({bar_x + 60, margin * 2 + text_width(title, 15) * 1.05 + 10, margin * 2 + text_width(caption, 11)});
  const double height = y0 + std::max(grid_h, bar_h) + margin + 8;
  const double max = max_weight(m);
  std::string svg = svg_open(width, height);
  svg += title_block(title, caption, margin);
  svg += draw_cells(m, rows, cols, p, x0, y0, max);
  svg += colour_bar(bar_x, y0, bar_h, max > 0 ? max : 1);
  svg += "</svg>\n";
  return svg;
}

std::string head_grid_svg(const AttentionRecord& record, AttentionKind kind, int layer) {
  const std::vector<int> heads = heads_of(record, kind, layer);
  std::vector<AttentionMatrix> panels;
  if (heads.empty()) select_matrix(record, kind, layer, kMeanHead);  // throws, naming what there is
  for (int h : heads) panels.push_back(select_matrix(record, kind, layer, h));
  panels.push_back(select_matrix(record, kind, layer, kMeanHead));
  for (const auto& m : panels) check_drawable(record, m);
  const std::vector<std::string> rows = query_labels(record, kind), cols = key_labels(record, kind);
  const AttentionMatrix& first = panels.front();
  if (static_cast<int>(rows.size()) != first.rows || static_cast<int>(cols.size()) != first.cols)
    throw Error(record_name(record) + ": " + kind_title(kind) + " matrix does not match the record's pieces");
  double max = 0;
  for (const auto& m : panels) max = std::max(max, max_weight(m));
  if (!(max > 0)) max = 1;

  const int n = std::max(first.rows, first.cols);
  const int cell = std::clamp(300 / n, 3, 20);
  const bool labels = cell >= 7;
  const double font = std::clamp(cell * 0.65, 7.0, 11.0);
  const Panel p = layout_panel(rows, cols, cell, font, labels);
  const int count = static_cast<int>(panels.size());
  const int per_row = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  const int panel_rows = (count + per_row - 1) / per_row;
  const double pad = 18, margin = 16, header = 52, panel_title = 18;
  const double pw = std::ceil(p.row_label_w + first.cols * cell + p.col_overhang + pad);
  const double ph = std::ceil(panel_title + p.col_label_h + first.rows * cell + pad);
  const std::string title = record_name(record) + " \u2014 " + kind_title(kind) + ", layer " + std::to_string(layer) +
                            ", every head and their mean";
  const std::string caption =
      axes_caption(kind) +
      (labels ? "" : " \u00b7 labels left out: " + std::to_string(n) + " tokens (see the per-head heatmaps)");
  const double bar_x = margin + per_row * pw + 10;
  const double width =
      std::max({bar_x + 60, margin * 2 + text_width(title, 15) * 1.05 + 10, margin * 2 + text_width(caption, 11)});
  const double height = header + panel_rows * ph + margin;
  std::string svg = svg_open(width, height);
  svg += title_block(title, caption, margin);
  for (int i = 0; i < count; ++i) {
    const double px = margin + (i % per_row) * pw, py = header + (i / per_row) * ph;
    const double x0 = std::ceil(px + p.row_label_w), y0 = std::ceil(py + panel_title + p.col_label_h);
    svg += "<text x=\"" + num(x0) + "\" y=\"" + num(py + 13) + "\" font-size=\"12\" font-weight=\"bold\">" +
           head_name(panels[i].head) + "</text>\n";
    svg += draw_cells(panels[i], rows, cols, p, x0, y0, max);
  }
  const double bar_h = std::clamp(first.rows * static_cast<double>(cell), 100.0, 400.0);
  svg += colour_bar(bar_x, header + panel_title + p.col_label_h, bar_h, max);
  svg += "</svg>\n";
  return svg;
}

}  // namespace attn::inspect
