#pragma once
// A small SVG line chart: one x axis, a left and an optional right y axis, several series.
#include <string>
#include <vector>

namespace attn::inspect {

struct ChartSeries {
  std::string label;
  std::string color;  // CSS colour
  bool right_axis = false;
  bool dashed = false;                            // a dashed line (e.g. another source's numbers beside ours)
  bool line = true;                               // false: the points alone, unconnected (a circle in the legend)
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  bool filled = false;  // points alone as filled discs, not hollow circles (a mean among its seeds' points)
};

struct ChartOptions {
  std::string title, x_label, left_label, right_label;
  int width = 760, height = 380;
  bool log2_x = false;  // x on a base-2 logarithmic axis, ticks at powers of two (x must be > 0:
                        // svg_line_chart throws Error otherwise)
  // Named categories instead of numbers: x = 1..n are the categories, one tick each, labelled
  // with its name (x must be one of them: svg_line_chart throws Error otherwise).
  std::vector<std::string> x_categories{};
};

// The series colours of every chart (a run's learning curve, a sweep's and Table 3's charts): blue,
// red, green, then seven more (d3's category10 in that order); series i takes entry i % size.
const std::vector<std::string>& chart_palette();

std::string svg_line_chart(const std::vector<ChartSeries>& series, const ChartOptions& options);

}  // namespace attn::inspect
