#include "study/learning_curve.h"

#include <cmath>

namespace attn::study {
namespace {

// Linear between the two points either side of x (in x order); nullopt outside [first, last].
std::optional<double> interpolate(const std::vector<CurvePoint>& c, double x, bool by_value) {
  auto at = [&](const CurvePoint& p) { return by_value ? p.value : static_cast<double>(p.step); };
  auto of = [&](const CurvePoint& p) { return by_value ? static_cast<double>(p.step) : p.value; };
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (at(c[i]) < x) continue;
    if (at(c[i]) == x) return of(c[i]);
    if (i == 0) return std::nullopt;
    const double x0 = at(c[i - 1]), x1 = at(c[i]);
    return of(c[i - 1]) + (of(c[i]) - of(c[i - 1])) * (x - x0) / (x1 - x0);
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> update_at_time(const std::vector<CurvePoint>& elapsed, double seconds) {
  if (seconds <= 0) return 0.0;
  std::vector<CurvePoint> from_start;
  from_start.reserve(elapsed.size() + 1);
  from_start.push_back({0, 0.0});
  for (const auto& p : elapsed)
    if (p.value > from_start.back().value) from_start.push_back(p);  // time only moves on
  return interpolate(from_start, seconds, true);
}

std::optional<double> value_at_update(const std::vector<CurvePoint>& curve, double update) {
  return interpolate(curve, update, false);
}

std::optional<double> last_quarter_change(const std::vector<CurvePoint>& dev_cross_entropy, std::int64_t updates) {
  const auto before = value_at_update(dev_cross_entropy, 0.75 * static_cast<double>(updates));
  const auto after = value_at_update(dev_cross_entropy, static_cast<double>(updates));
  if (!before || !after) return std::nullopt;
  return std::abs(std::exp(*after) - std::exp(*before)) / std::exp(*before);
}

}  // namespace attn::study
