#include "study/learning_curve.h"

#include <algorithm>
#include <cmath>

namespace attn::study {
namespace {

// Linear between the two points either side of `update`; nullopt outside [first, last].
std::optional<double> interpolate(const std::vector<CurvePoint>& c, double update) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double at = static_cast<double>(c[i].step);
    if (at < update) continue;
    if (at == update) return c[i].value;
    if (i == 0) return std::nullopt;
    const double before = static_cast<double>(c[i - 1].step);
    return c[i - 1].value + (c[i].value - c[i - 1].value) * (update - before) / (at - before);
  }
  return std::nullopt;
}

}  // namespace

double steady_seconds_per_update(const std::vector<CurvePoint>& elapsed) {
  std::vector<double> paces;
  CurvePoint previous{0, 0.0};
  for (const auto& p : elapsed) {
    if (p.step > previous.step && p.value >= previous.value)
      paces.push_back((p.value - previous.value) / static_cast<double>(p.step - previous.step));
    previous = p;
  }
  if (paces.empty()) return 0;
  if (paces.size() > 1) paces.erase(paces.begin());  // the start-up
  std::sort(paces.begin(), paces.end());
  return paces[static_cast<std::size_t>(0.2 * static_cast<double>(paces.size() - 1))];
}

std::optional<double> value_at_update(const std::vector<CurvePoint>& curve, double update) {
  return interpolate(curve, update);
}

std::optional<double> last_quarter_change(const std::vector<CurvePoint>& dev_cross_entropy, std::int64_t updates) {
  const auto before = value_at_update(dev_cross_entropy, 0.75 * static_cast<double>(updates));
  const auto after = value_at_update(dev_cross_entropy, static_cast<double>(updates));
  if (!before || !after) return std::nullopt;
  return std::abs(std::exp(*after) - std::exp(*before)) / std::exp(*before);
}

}  // namespace attn::study
