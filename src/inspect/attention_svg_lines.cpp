// The "lines" picture of the paper's appendix (Figures 3-5), turned on its side.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "inspect/attention_svg.h"
#include "inspect/attention_svg_internal.h"

namespace attn::inspect {

using namespace svg_detail;

namespace {

std::string opacity(double w) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.3f", std::clamp(w, 0.0, 1.0));
  return buf;
}

std::string head_color(int head) {
  if (head == kMeanHead) return std::string(kMeanColor);
  const auto& palette = head_palette();
  return palette[static_cast<std::size_t>(head) % palette.size()];
}

}  // namespace

std::string lines_svg(const AttentionRecord& record, AttentionKind kind, int layer, const LinesOptions& options) {
  const std::string name = "line " + std::to_string(record.line);
  std::vector<int> heads = options.heads;
  if (heads.empty()) heads = heads_of(record, kind, layer);
  std::vector<AttentionMatrix> matrices;
  if (heads.empty()) select_matrix(record, kind, layer, kMeanHead);  // throws, naming what there is
  for (int h : heads) matrices.push_back(select_matrix(record, kind, layer, h));
  for (const auto& m : matrices) check_drawable(record, m);
  const std::vector<std::string> queries = query_labels(record, kind), keys = key_labels(record, kind);
  const int nq = matrices.front().rows, nk = matrices.front().cols;
  if (static_cast<int>(queries.size()) != nq || static_cast<int>(keys.size()) != nk)
    throw Error(name + ": " + kind_title(kind) + " matrix does not match the record's pieces");
  if (options.query < -1 || options.query >= nq)
    throw Error(name + ": query token " + std::to_string(options.query) + " is out of range: " + kind_title(kind) +
                " has " + std::to_string(nq) + " query tokens (0-" + std::to_string(nq - 1) + ")");

  const int n = std::max(nq, nk);
  const double pitch = n <= 20 ? 26 : n <= 80 ? 20 : 14, font = n <= 80 ? 12 : 10, stroke = n <= 80 ? 2 : 1.5;
  double lw = 0, rw = 0;
  for (const auto& s : queries) lw = std::max(lw, text_width(s, font));
  for (const auto& s : keys) rw = std::max(rw, text_width(s, font));
  const double margin = 16, gap = 260;
  const double left_w = std::max(lw, text_width("queries", 11));

  std::string heads_text;
  if (heads.size() == 1) {
    heads_text = heads[0] == kMeanHead ? "mean over heads" : "head " + std::to_string(heads[0]);
  } else {
    heads_text = std::to_string(heads.size()) + " heads";
  }
  std::string title = name + " \u2014 " + kind_title(kind) + ", layer " + std::to_string(layer) + ", " + heads_text;
  if (options.query >= 0) title += ", from \u201c" + queries[options.query] + "\u201d";
  char cutoff[32];
  std::snprintf(cutoff, sizeof cutoff, "%g", options.cutoff);
  const std::string caption =
      "left: " + std::string(kind == AttentionKind::encoder_self ? "source" : "target") +
      " pieces (queries) \u00b7 right: " + (kind == AttentionKind::decoder_self ? "decoder inputs" : "source pieces") +
      " (keys) \u00b7 line opacity = weight; weights below " + cutoff + " left out";

  // Legend: one swatch a head, wrapped to the picture's width.
  const double content_w = left_w + 8 + gap + 8 + rw;
  const double width = std::max({content_w + 2 * margin, margin * 2 + text_width(title, 15) * 1.05 + 10,
                                 margin * 2 + text_width(caption, 11), 420.0});
  // The two columns and their lines, centred.
  const double left_text = std::ceil((width - content_w) / 2 + left_w), x1 = left_text + 8, x2 = x1 + gap,
               right_text = x2 + 8;
  std::string legend;
  double lx = margin, ly = 62;
  for (int h : heads) {
    const std::string label = h == kMeanHead ? "mean" : "head " + std::to_string(h);
    const double w = 24 + text_width(label, 11) + 14;
    if (lx + w > width - margin && lx > margin) {
      lx = margin;
      ly += 18;
    }
    legend += "<line x1=\"" + num(lx) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(lx + 18) + "\" y2=\"" +
              num(ly - 4) + "\" stroke=\"" + head_color(h) + "\" stroke-width=\"4\"/>";
    legend += "<text x=\"" + num(lx + 22) + "\" y=\"" + num(ly) + "\" font-size=\"11\">" + label + "</text>\n";
    lx += w;
  }
  const double top = ly + 34, height_h = n * pitch;
  const double height = top + height_h + margin;
  auto qy = [&](int i) { return top + (i + 0.5) * height_h / nq; };
  auto ky = [&](int j) { return top + (j + 0.5) * height_h / nk; };

  std::string svg = svg_open(width, height);
  svg += "<text x=\"" + num(margin) + "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" + xml_escape(title) +
         "</text>\n<text x=\"" + num(margin) + "\" y=\"40\" font-size=\"11\" fill=\"#555\">" + xml_escape(caption) +
         "</text>\n";
  svg += legend;
  svg += "<text x=\"" + num(left_text) + "\" y=\"" + num(top - 10) +
         "\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">queries</text>\n";
  svg += "<text x=\"" + num(right_text) + "\" y=\"" + num(top - 10) + "\" font-size=\"11\" fill=\"#555\">keys</text>\n";
  for (std::size_t k = 0; k < matrices.size(); ++k) {
    const AttentionMatrix& m = matrices[k];
    svg += "<g class=\"head\" stroke=\"" + head_color(heads[k]) + "\" stroke-width=\"" + num(stroke) +
           "\" stroke-linecap=\"round\">\n";
    for (int i = 0; i < nq; ++i) {
      if (options.query >= 0 && i != options.query) continue;
      for (int j = 0; j < nk; ++j) {
        const double w = m.at(i, j);
        if (!(w >= options.cutoff)) continue;
        svg += "<line x1=\"" + num(x1) + "\" y1=\"" + num(qy(i)) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(ky(j)) +
               "\" stroke-opacity=\"" + opacity(w) + "\"/>\n";
      }
    }
    svg += "</g>\n";
  }
  const std::string fs = "font-size=\"" + num(font) + "\"";
  for (int i = 0; i < nq; ++i) {
    std::string style = fs;
    if (options.query >= 0) style += i == options.query ? " font-weight=\"bold\"" : " fill=\"#999\"";
    svg += text_element(
        "x=\"" + num(left_text) + "\" y=\"" + num(qy(i) + font * 0.35) + "\" text-anchor=\"end\" " + style, queries[i]);
  }
  for (int j = 0; j < nk; ++j)
    svg += text_element("x=\"" + num(right_text) + "\" y=\"" + num(ky(j) + font * 0.35) + "\" " + fs, keys[j]);
  svg += "</svg>\n";
  return svg;
}

}  // namespace attn::inspect
