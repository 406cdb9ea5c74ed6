#pragma once
// A small SVG line chart: one x axis, a left and an optional right y axis, several series.
#include <string>
#include <vector>

namespace attn::cli {

struct ChartSeries {
  std::string label;
  std::string color;     // CSS colour
  bool right_axis = false;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct ChartOptions {
  std::string title, x_label, left_label, right_label;
  int width = 760, height = 380;
};

std::string svg_line_chart(const std::vector<ChartSeries>& series, const ChartOptions& options);

}  // namespace attn::cli
