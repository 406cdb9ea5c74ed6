// The SVG line chart: where points land, the base-2 axis, dashed lines, points without a line,
// points it cannot draw, and a legend that does not cover them.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "common/count_of.h"
#include "core/error.h"
#include "inspect/svg_chart.h"

namespace attn::inspect {
namespace {

using testing::count_of;

TEST(SvgChart, PointsLandWhereTheAxesSay) {
  // Defaults: 760 x 380, margins 70 left, 30 right (no right axis), 40 top, 55 bottom. x 0..10
  // spans 70..730; y 0..10 spans 325..40. The point (5, 5) is at (400, 182.5).
  ChartSeries s{"s", "#123456", false, false, true, {{0, 0}, {5, 5}, {10, 10}}};
  const std::string svg = svg_line_chart({s}, {"t", "x", "y", ""});
  EXPECT_NE(svg.find("points=\"70.0,325.0 400.0,182.5 730.0,40.0 \""), std::string::npos) << svg;
  EXPECT_EQ(count_of(svg, "<circle"), 3);
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
  EXPECT_EQ(count_of(svg, "<polyline"), 1);                          // the points alone have none
  EXPECT_EQ(count_of(svg, "stroke-dasharray"), 2);                   // the dashed line and its legend entry
  EXPECT_EQ(count_of(svg, "fill=\"white\" stroke=\"#1f77b4\""), 3);  // two hollow points and the legend's
  EXPECT_NE(svg.find("paper (right)"), std::string::npos);
}

// Filled points (a mean beside its seeds' hollow circles) are discs of the series' colour, in the
// legend too; the hollow ones stay white inside.
TEST(SvgChart, FilledPointsStandApartFromHollowOnes) {
  ChartSeries mean{"mean", "#ff7f0e", false, false, false, {{1, 2}, {2, 3}}};
  mean.filled = true;
  ChartSeries seeds{"each seed", "#ff7f0e", false, false, false, {{1, 1}, {1, 3}, {2, 3}}};
  const std::string svg = svg_line_chart({mean, seeds}, {"t", "x", "left", "right"});
  EXPECT_EQ(count_of(svg, "r=\"6\" fill=\"#ff7f0e\"/>"), 3);                 // two points and the legend's
  EXPECT_EQ(count_of(svg, "r=\"5\" fill=\"white\" stroke=\"#ff7f0e\""), 4);  // three points and the legend's
  EXPECT_EQ(count_of(svg, "<polyline"), 0);
}

// Named categories: one tick per category at x = 1..n, labelled (escaped), the axis from 0.5 to
// n + 0.5; an x that is not a category is refused.
TEST(SvgChart, CategoriesAreTicksWithTheirNames) {
  ChartSeries s{"s", "#000", false, false, false, {{1, 0}, {2, 5}, {3, 10}}};
  ChartOptions o{"t", "variant", "y", ""};
  o.x_categories = {"small", "lr<2>", "6-1"};
  const std::string svg = svg_line_chart({s}, o);
  for (const char* tick : {">small<", ">lr&lt;2&gt;<", ">6-1<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(count_of(svg, "text-anchor=\"middle\">"), 3 + 1 + 1) << svg;  // 3 ticks, the title, the x label
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

std::vector<Spot> matches(const std::string& svg, const std::regex& re) {
  std::vector<Spot> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2])});
  return out;
}

// The centres of the chart's circles, and the vertices of its lines.
std::vector<Spot> circles(const std::string& svg) {
  return matches(svg, std::regex(R"re(<circle cx="([0-9.]+)" cy="([0-9.]+)")re"));
}

std::vector<std::vector<Spot>> polylines(const std::string& svg) {
  std::vector<std::vector<Spot>> out;
  const std::regex line(R"re(<polyline[^>]* points="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it)
    out.push_back(matches((*it)[1].str(), std::regex(R"(([0-9.]+),([0-9.]+))")));
  return out;
}

Spot text_of(const std::string& svg, const std::string& label) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex(R"re(<text x="([0-9.]+)" y="([0-9.]+)">)re" + label + "</text>")))
      << label << "\n"
      << svg;
  return m.empty() ? Spot{0, 0} : Spot{std::stod(m[1]), std::stod(m[2])};
}

// The sweep report's chart of dev BLEU per variant drew its legend over the best variant when that
// one was last and highest (the top right, where the legend always went), and then its marker, a
// hollow circle like the points, beside sweep 5's highest point. A legend entry is its marker (30
// px) and its text (at most ~7 px a character, 12 px high): no point's circle (radius 5) may come
// within 12 px of the legend, no line within 12 px, and the legend stays inside the plot (x
// 70..730, y 40..325 at the default size).
TEST(SvgChart, TheLegendCoversNoPoint) {
  auto check = [&](const std::vector<ChartSeries>& series, const ChartOptions& o, const char* what) {
    SCOPED_TRACE(what);
    const std::string svg = svg_line_chart(series, o);
    std::vector<Spot> markers;
    double x0 = 1e9, x1 = -1e9, y0 = 1e9, y1 = -1e9;
    std::size_t points = 0, lines = 0;
    for (const auto& s : series) {
      const std::string label = s.label + (s.right_axis ? " \\(right\\)" : "");
      const Spot t = text_of(svg, label);
      const double chars = static_cast<double>(s.label.size() + (s.right_axis ? 8 : 0));
      x0 = std::min(x0, t.x - 30), x1 = std::max(x1, t.x + 7 * chars);
      y0 = std::min(y0, t.y - 14), y1 = std::max(y1, t.y + 4);
      if (!s.line) markers.push_back({t.x - 17.5, t.y - 4});
      points += s.points.size(), lines += s.line;
    }
    EXPECT_GE(x0, 70);
    EXPECT_LE(x1, 730);
    EXPECT_GE(y0, 40);
    EXPECT_LE(y1, 325);
    auto near = [&](Spot c, double by) { return c.x + by >= x0 && c.x - by <= x1 && c.y + by >= y0 && c.y - by <= y1; };
    const std::vector<Spot> drawn = circles(svg);
    EXPECT_EQ(drawn.size(), points + markers.size());  // every point, and a marker per series of points alone
    for (const Spot& c : drawn) {
      bool marker = false;
      for (const Spot& m : markers) marker |= std::abs(c.x - m.x) < 0.01 && std::abs(c.y - m.y) < 0.01;
      if (!marker && near(c, 5 + 12))
        ADD_FAILURE() << "a point at (" << c.x << ", " << c.y << ") by the legend\n" << svg;
    }
    const auto paths = polylines(svg);
    EXPECT_EQ(paths.size(), lines);
    for (const auto& path : paths)
      for (std::size_t i = 0; i + 1 < path.size(); ++i)
        for (double f = 0; f <= 1; f += 1.0 / 256) {
          const Spot c{path[i].x + f * (path[i + 1].x - path[i].x), path[i].y + f * (path[i + 1].y - path[i].y)};
          if (near(c, 12)) {
            ADD_FAILURE() << "a line through (" << c.x << ", " << c.y << ") by the legend\n" << svg;
            return;
          }
        }
  };
  const std::string label = "dev BLEU";
  ChartOptions categories{"t", "variant", "dev BLEU", ""};
  categories.x_categories = {"a", "b", "c", "d", "e", "f", "g", "h"};
  // Sweep 4's points: the seventh of eight the highest, at the top right.
  check({{label,
          "#1f77b4",
          false,
          false,
          false,
          {{1, 26.09}, {2, 26.07}, {3, 25.87}, {4, 25.23}, {5, 24.05}, {6, 22.21}, {7, 26.77}, {8, 22.98}}}},
        categories, "sweep 4");
  ChartOptions four = categories;
  four.x_categories.resize(4);
  check({{label, "#1f77b4", false, false, false, {{1, 26.14}, {2, 25.45}, {3, 22.40}, {4, 26.41}}}}, four, "sweep 5");
  // Rising to the top right; falling, then the highest last; a U (both top corners taken).
  check({{label, "#000", false, false, false, {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}}}},
        categories, "rising");
  check({{label, "#000", false, false, false, {{1, 8}, {2, 7}, {3, 6}, {4, 5}, {5, 4}, {6, 3}, {7, 2}, {8, 10}}}},
        categories, "falling, then the highest last");
  check({{label, "#000", false, false, false, {{1, 10}, {2, 9}, {3, 5}, {4, 1}, {5, 1}, {6, 5}, {7, 9}, {8, 10}}}},
        categories, "a U");
  // Lines: one through the top right corner; a learning curve falling from the top left with a
  // second series on the right axis rising to the top right (two legend entries).
  check({{label, "#000", false, false, true, {{0, 0}, {5, 1}, {9, 9}, {10, 10}}}}, {"t", "x", "y", ""}, "line");
  check({{"train loss", "#000", false, false, true, {{0, 10}, {1, 6}, {2, 4}, {4, 3}, {8, 2.5}, {10, 2.4}}},
         {"BLEU", "#d62728", true, false, true, {{0, 0}, {2, 10}, {4, 20}, {8, 25}, {10, 26}}}},
        {"t", "x", "loss", "BLEU"}, "two axes");
}

}  // namespace
}  // namespace attn::inspect
