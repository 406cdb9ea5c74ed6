#include "inspect/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/xml_escape.h"

namespace attn::inspect {

const std::vector<std::string>& chart_palette() {
  static const std::vector<std::string> palette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette;
}
namespace {

struct Range {
  double lo = 1e300, hi = -1e300;
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// "Nice" tick step: 1, 2 or 5 times a power of ten, for about `count` ticks.
double tick_step(const Range& r, int count) {
  const double raw = (r.hi - r.lo) / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

Range nice(Range r) {
  if (r.empty()) return {0, 1};
  if (r.hi - r.lo < 1e-12) r.hi = r.lo + 1;
  const double s = tick_step(r, 5);
  return {std::floor(r.lo / s) * s, std::ceil(r.hi / s) * s};
}

std::string fmt(double v) {
  char buf[32];
  if (std::abs(v) >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%g", std::round(v * 1000) / 1000);
  return buf;
}

}  // namespace

std::string svg_line_chart(const std::vector<ChartSeries>& series, const ChartOptions& o) {
  Range x, left, right;
  auto xv = [&](double v) { return o.log2_x ? std::log2(v) : v; };
  const double categories = static_cast<double>(o.x_categories.size());
  auto category = [&](double v) { return v >= 1 && v <= categories && v == std::floor(v); };
  for (const auto& s : series)
    for (const auto& [px, py] : s.points) {
      if (!o.x_categories.empty() && !category(px))
        throw Error("chart '" + o.title + "', series '" + s.label + "': x " + fmt(px) + " is not one of the " +
                    fmt(categories) + " categories");
      if (!std::isfinite(px) || !std::isfinite(py) || (o.log2_x && !(px > 0)))
        throw Error("chart '" + o.title + "', series '" + s.label + "': point (" + fmt(px) + ", " + fmt(py) +
                    ") cannot be drawn" + (o.log2_x ? " on a logarithmic x axis (x must be > 0)" : ""));
      x.add(xv(px));
      (s.right_axis ? right : left).add(py);
    }
  if (!o.x_categories.empty())
    x = Range{0.5, categories + 0.5};
  else if (o.log2_x)
    x = x.empty() ? Range{0, 1} : Range{std::floor(x.lo), std::max(std::ceil(x.hi), std::floor(x.lo) + 1)};
  else
    x = nice(x);
  left = nice(left);
  right = nice(right);
  const double ml = 70, mr = right.empty() || o.right_label.empty() ? 30 : 70, mt = 40, mb = 55;
  const double pw = o.width - ml - mr, ph = o.height - mt - mb;
  auto sx = [&](double v) { return ml + (v - x.lo) / (x.hi - x.lo) * pw; };
  auto sy = [&](const Range& r, double v) { return mt + ph - (v - r.lo) / (r.hi - r.lo) * ph; };
  // The legend goes in the corner of the plot where the least ink comes within 20 px of it (its
  // marker must not pass for a point): the top right first, then the top left, the bottom right,
  // the bottom left. Ink is counted in 4-px cells, each once, so that a line logged densely does
  // not outweigh a sparse one: every point's cell, and every cell a line passes through.
  auto legend_label = [](const ChartSeries& s) { return s.label + (s.right_axis ? " (right)" : ""); };
  std::size_t entries = 0, longest = 0;
  for (const auto& s : series)
    if (!s.points.empty()) {
      ++entries;
      longest = std::max(longest, legend_label(s).size());
    }
  const double legend_w = 40 + 7.0 * static_cast<double>(longest), legend_h = 18.0 * static_cast<double>(entries);
  std::set<std::pair<long, long>> ink;
  auto mark = [&](double px, double py) { ink.emplace(std::lround(px / 4), std::lround(py / 4)); };
  for (const auto& s : series) {
    const Range& r = s.right_axis ? right : left;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const double px = sx(xv(s.points[i].first)), py = sy(r, s.points[i].second);
      mark(px, py);
      if (s.line && i + 1 < s.points.size()) {  // the segment to the next point, every 2 px
        const double qx = sx(xv(s.points[i + 1].first)), qy = sy(r, s.points[i + 1].second);
        const int samples = 1 + static_cast<int>(std::hypot(qx - px, qy - py) / 2);
        for (int k = 1; k < samples; ++k) {
          const double f = static_cast<double>(k) / samples;
          mark(px + f * (qx - px), py + f * (qy - py));
        }
      }
    }
  }
  auto covered = [&](double left_edge, double top_edge) {
    const double clear = 20, x0 = left_edge - clear, x1 = left_edge + legend_w + clear, y0 = top_edge - clear,
                 y1 = top_edge + legend_h + clear;
    std::size_t n = 0;
    for (const auto& [cx, cy] : ink) {
      const double px = 4.0 * static_cast<double>(cx), py = 4.0 * static_cast<double>(cy);
      n += px >= x0 && px <= x1 && py >= y0 && py <= y1;
    }
    return n;
  };
  // A legend wider or taller than the plot starts at its left or top edge.
  const double left_x = ml + 10, top_y = mt + 4;
  const double right_x = std::max(left_x, ml + pw - 10 - legend_w), bottom_y = std::max(top_y, mt + ph - 4 - legend_h);
  double lx = right_x, ly0 = top_y;
  std::size_t fewest = covered(lx, ly0);
  for (const auto& [cx, cy] : {std::pair{left_x, top_y}, std::pair{right_x, bottom_y}, std::pair{left_x, bottom_y}}) {
    if (fewest == 0) break;
    const std::size_t n = covered(cx, cy);
    if (n < fewest) fewest = n, lx = cx, ly0 = cy;
  }
  // No corner free (a loss falling from the top left while a score rises to the top right): the
  // value axes grow upwards until the data leave a band at the top for the legend, at the right.
  if (fewest > 0 && legend_h + 48 < ph) {
    const double grow = ph / (ph - legend_h - 48);
    for (Range* r : {&left, &right})
      if (!r->empty()) {  // the bottom stays where it is; the top rounds up to a whole tick step
        const double step = tick_step(Range{r->lo, r->lo + (r->hi - r->lo) * grow}, 5);
        r->hi = r->lo + std::ceil((r->hi - r->lo) * grow / step) * step;
      }
    lx = right_x, ly0 = top_y;
  }
  std::string svg;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                o.width, o.height);
  svg += buf;
  std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
                o.width / 2.0, xml_escape(o.title).c_str());
  svg += buf;
  // Grid and ticks.
  const double xs = o.log2_x || categories > 0 ? 1.0 : tick_step(x, 6), ls = tick_step(left, 5);
  for (double v = categories > 0 ? 1.0 : x.lo; v <= x.hi + xs / 2 && (categories == 0 || v <= categories); v += xs) {
    const std::string label =
        categories > 0 ? o.x_categories[static_cast<std::size_t>(v) - 1] : fmt(o.log2_x ? std::exp2(v) : v);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                  sx(v), mt, sx(v), mt + ph, sx(v), mt + ph + 16, xml_escape(label).c_str());
    svg += buf;
  }
  for (double v = left.lo; v <= left.hi + ls * 1e-6; v += ls) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                  ml, sy(left, v), ml + pw, sy(left, v), ml - 6, sy(left, v) + 4, fmt(v).c_str());
    svg += buf;
  }
  if (mr > 30) {
    const double rs = tick_step(right, 5);
    for (double v = right.lo; v <= right.hi + rs * 1e-6; v += rs) {
      std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", ml + pw + 6, sy(right, v) + 4,
                    fmt(v).c_str());
      svg += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "<text transform=\"translate(%.1f,%.1f) rotate(90)\" text-anchor=\"middle\">%s</text>\n",
                  o.width - 18.0, mt + ph / 2, xml_escape(o.right_label).c_str());
    svg += buf;
  }
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n"
                "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
                ml, mt, pw, ph, ml + pw / 2, o.height - 12.0, xml_escape(o.x_label).c_str(), mt + ph / 2,
                xml_escape(o.left_label).c_str());
  svg += buf;
  // Series and legend.
  double ly = ly0 + 14;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    const Range& r = s.right_axis ? right : left;
    if (s.line) {
      svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + s.color + "\"" +
             (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"";
      for (const auto& [px, py] : s.points) {
        std::snprintf(buf, sizeof buf, "%.1f,%.1f ", sx(xv(px)), sy(r, py));
        svg += buf;
      }
      svg += "\"/>\n";
    }
    // Points alone are hollow circles, a size larger, so that they stand apart from a line's dots;
    // filled, discs of that size.
    auto circle = [&](double cx, double cy) {
      if (s.line)
        std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", cx, cy,
                      s.color.c_str());
      else if (s.filled)
        std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"/>\n", cx, cy,
                      s.color.c_str());
      else
        std::snprintf(buf, sizeof buf,
                      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"white\" stroke=\"%s\" stroke-width=\"2\"/>\n", cx,
                      cy, s.color.c_str());
      svg += buf;
    };
    if (s.points.size() < 40 || !s.line)
      for (const auto& [px, py] : s.points) circle(sx(xv(px)), sy(r, py));
    if (s.line) {
      std::snprintf(buf, sizeof buf,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"%s/>", lx,
                    ly - 4, lx + 25, ly - 4, s.color.c_str(), s.dashed ? " stroke-dasharray=\"4 3\"" : "");
      svg += buf;
    } else {
      circle(lx + 12.5, ly - 4);
    }
    std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", lx + 30, ly,
                  xml_escape(legend_label(s)).c_str());
    svg += buf;
    ly += 18;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace attn::inspect
