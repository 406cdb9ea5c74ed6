#pragma once
// The paper's schedule (section 5.3):
//   lr(step) = scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)
// rising linearly for `warmup` steps, then decaying with the inverse square root of the step.
// With `linear_end` > warmup (lr_decay "linear"), the same rise to the same peak, then a straight
// line down to 0 at update linear_end (the run's last: a short run ends annealed, as with WSD or
// fairseq's polynomial_decay schedules, instead of at ~the peak · sqrt(warmup / steps)).
// A run whose end is re-estimated as it goes (a time budget) turns the line at the step of each new
// estimate: from `linear_from` (0: the warmup's end) at `linear_from_fraction` of the peak, straight
// down to 0 at the new linear_end, so the rate never jumps.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attn {

struct LearningRateSchedule {
  int d_model = 512;
  int warmup_steps = 4000;
  double scale = 1.0;
  std::int64_t linear_end = 0;        // > 0: linear decay to 0 at this step
  std::int64_t linear_from = 0;       // > warmup: the line starts here (the last re-estimate)...
  double linear_from_fraction = 1.0;  // ...at this fraction of the peak

  // The rate at the end of the warmup.
  double peak() const { return scale / std::sqrt(static_cast<double>(d_model) * warmup_steps); }

  // step counts from 1.
  double operator()(std::int64_t step) const {
    const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
    const double w = static_cast<double>(warmup_steps);
    const double rise = s * std::pow(w, -1.5);
    const double base = scale / std::sqrt(static_cast<double>(d_model));
    if (linear_end <= 0) return base * std::min(1.0 / std::sqrt(s), rise);
    const double unscaled_peak = 1.0 / std::sqrt(w);  // peak() / base
    const bool turned = linear_from > warmup_steps;
    const double from = turned ? static_cast<double>(linear_from) : w;
    const double height = turned ? unscaled_peak * linear_from_fraction : unscaled_peak;
    const double fall = height * std::max(0.0, static_cast<double>(linear_end) - s) /
                        std::max(1.0, static_cast<double>(linear_end) - from);
    return base * std::min(rise, fall);
  }
};

}  // namespace attn
