// The SVG line chart: where points land, the base-2 axis, dashed lines, points without a line,
// points it cannot draw, and a legend that does not cover them.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "core/error.h"
#include "inspect/svg_chart.h"

namespace attn::inspect {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(SvgChart, PointsLandWhereTheAxesSay) {
  // Defaults: 760 x 380, margins 70 left, 30 right (no right axis), 40 top, 55 bottom. x 0..10
  // spans 70..730; y 0..10 spans 325..40. The point (5, 5) is at (400, 182.5).
  ChartSeries s{"s", "#123456", false, false, true, {{0, 0}, {5, 5}, {10, 10}}};
  const std::string svg = svg_line_chart({s}, {"t", "x", "y", ""});
  EXPECT_NE(svg.find("points=\"70.0,325.0 400.0,182.5 730.0,40.0 \""), std::string::npos) << svg;
  EXPECT_EQ(count(svg, "<circle"), 3);
  EXPECT_EQ(svg.find("stroke-dasharray"), std::string::npos);
}

TEST(SvgChart, Log2AxisTicksAtPowersOfTwo) {
  // h = 1, 4, 8, 16, 32: log2 0..5 spans 70..730, so h = 8 (log2 3) lands at 466.
  ChartSeries s{"s", "#000", false, false, true, {{1, 1}, {4, 2}, {8, 3}, {16, 4}, {32, 5}}};
  ChartOptions o{"t", "heads", "y", ""};
  o.log2_x = true;
  const std::string svg = svg_line_chart({s}, o);
  for (const char* tick : {">1<", ">2<", ">4<", ">8<", ">16<", ">32<"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(svg.find(" 466.0,"), std::string::npos) << svg;
  // All x equal: one decade of the axis, no division by zero.
  ChartSeries one{"one", "#000", false, false, true, {{8, 1}, {8, 2}}};
  EXPECT_EQ(svg_line_chart({one}, o).find("nan"), std::string::npos);
}

TEST(SvgChart, DashedLinesAndPointsWithoutALine) {
  ChartSeries dashed{"paper", "#d62728", true, true, true, {{1, 5}, {2, 6}}};
  ChartSeries alone{"seed 2", "#1f77b4", false, false, false, {{1, 1}, {2, 2}}};
  const std::string svg = svg_line_chart({dashed, alone}, {"t", "x", "left", "right"});
  EXPECT_EQ(count(svg, "<polyline"), 1);                          // the points alone have none
  EXPECT_EQ(count(svg, "stroke-dasharray"), 2);                   // the dashed line and its legend entry
  EXPECT_EQ(count(svg, "fill=\"white\" stroke=\"#1f77b4\""), 3);  // two hollow points and the legend's
  EXPECT_NE(svg.find("paper (right)"), std::string::npos);
}

// Named categories: one tick per category at x = 1..n, labelled (escaped), the axis from 0.5 to
// n + 0.5; an x that is not a category is refused.
TEST(SvgChart, CategoriesAreTicksWithTheirNames) {
  ChartSeries s{"s", "#000", false, false, false, {{1, 0}, {2, 5}, {3, 10}}};
  ChartOptions o{"t", "variant", "y", ""};
  o.x_categories = {"small", "lr<2>", "6-1"};
  const std::string svg = svg_line_chart({s}, o);
  for (const char* tick : {">small<", ">lr&lt;2&gt;<", ">6-1<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(count(svg, "text-anchor=\"middle\">"), 3 + 1 + 1) << svg;  // 3 ticks, the title, the x label
  // x 0.5..3.5 spans 70..730: category 2 lands in the middle, at 400.
  EXPECT_NE(svg.find("cx=\"400.0\""), std::string::npos) << svg;
  ChartSeries off{"s", "#000", false, false, false, {{1.5, 0}}};
  EXPECT_THROW(svg_line_chart({off}, o), Error);
  ChartSeries beyond{"s", "#000", false, false, false, {{4, 0}}};
  EXPECT_THROW(svg_line_chart({beyond}, o), Error);
}

TEST(SvgChart, PointsThatCannotBeDrawnAreRefused) {
  ChartOptions o{"chart", "x", "y", ""};
  o.log2_x = true;
  for (double x : {0.0, -1.0}) {
    ChartSeries s{"s", "#000", false, false, true, {{x, 1}, {2, 2}}};
    try {
      svg_line_chart({s}, o);
      ADD_FAILURE() << "x = " << x << " accepted on a logarithmic axis";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("chart 'chart', series 's'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("x must be > 0"), std::string::npos) << e.what();
    }
  }
  ChartSeries nan{"s", "#000", false, false, true, {{1, std::nan("")}}};
  EXPECT_THROW(svg_line_chart({nan}, {"t", "x", "y", ""}), Error);
}

struct Spot {
  double x, y;
};

// The centres of the chart's circles and where its legend's text sits.
std::vector<Spot> circles(const std::string& svg) {
  std::vector<Spot> out;
  const std::regex circle(R"re(<circle cx="([0-9.]+)" cy="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2])});
  return out;
}

Spot text_of(const std::string& svg, const std::string& label) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex(R"re(<text x="([0-9.]+)" y="([0-9.]+)">)re" + label + "</text>")))
      << svg;
  return m.empty() ? Spot{0, 0} : Spot{std::stod(m[1]), std::stod(m[2])};
}

// The sweep report's chart of dev BLEU per variant drew its legend over the best variant when that
// one was last and highest (the top right, where the legend always went). A legend entry is its
// marker (30 px) and its text (at most ~7 px a character, 12 px high): no data point may come
// within 12 px of it (sweep 5's chart put the legend's marker, a hollow circle like the points,
// 11 px beside its highest point), and it stays inside the plot (x 70..730, y 40..325 at the
// default size).
TEST(SvgChart, TheLegendCoversNoPoint) {
  const std::string label = "dev BLEU";
  auto check = [&](const ChartSeries& s, const ChartOptions& o, const char* what) {
    SCOPED_TRACE(what);
    const std::string svg = svg_line_chart({s}, o);
    const Spot t = text_of(svg, label);
    const double x0 = t.x - 30, x1 = t.x + 7.0 * static_cast<double>(label.size()), y0 = t.y - 14, y1 = t.y + 4;
    EXPECT_GE(x0, 70);
    EXPECT_LE(x1, 730);
    EXPECT_GE(y0, 40);
    EXPECT_LE(y1, 325);
    int in_legend = 0;
    for (const Spot& c : circles(svg)) {
      const double near = 5 + 12;  // the point's radius and the clearance
      const bool inside = c.x + near >= x0 && c.x - near <= x1 && c.y + near >= y0 && c.y - near <= y1;
      const bool marker = std::abs(c.x - (t.x - 17.5)) < 0.01 && std::abs(c.y - (t.y - 4)) < 0.01;
      if (inside && !marker) ADD_FAILURE() << "a point at (" << c.x << ", " << c.y << ") under the legend\n" << svg;
      in_legend += marker;
    }
    EXPECT_EQ(in_legend, s.line ? 0 : 1);  // points alone: the legend's marker is a circle too
  };
  ChartOptions categories{"t", "variant", "dev BLEU", ""};
  categories.x_categories = {"a", "b", "c", "d", "e", "f", "g", "h"};
  // Sweep 4's points: the seventh of eight the highest, at the top right.
  check({label,
         "#1f77b4",
         false,
         false,
         false,
         {{1, 26.09}, {2, 26.07}, {3, 25.87}, {4, 25.23}, {5, 24.05}, {6, 22.21}, {7, 26.77}, {8, 22.98}}},
        categories, "sweep 4");
  ChartOptions four = categories;
  four.x_categories.resize(4);
  check({label, "#1f77b4", false, false, false, {{1, 26.14}, {2, 25.45}, {3, 22.40}, {4, 26.41}}}, four, "sweep 5");
  // Rising to the top right and falling to the bottom right: the corners left free are elsewhere.
  check({label, "#000", false, false, false, {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}}},
        categories, "rising");
  check({label, "#000", false, false, false, {{1, 8}, {2, 7}, {3, 6}, {4, 5}, {5, 4}, {6, 3}, {7, 2}, {8, 10}}},
        categories, "falling, then the highest last");
  // A line through the top right corner: its dots too.
  check({label, "#000", false, false, true, {{0, 0}, {5, 1}, {9, 9}, {10, 10}}}, {"t", "x", "y", ""}, "line");
}

}  // namespace
}  // namespace attn::inspect
