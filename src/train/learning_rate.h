#pragma once
// The paper's schedule (section 5.3):
//   lr(step) = scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)
// rising linearly for `warmup` steps, then decaying with the inverse square root of the step.
// Along a DecayLine with an end > warmup (lr_decay "linear"), the same rise to the same peak, then a
// straight line down to 0 at update `end` (the run's last: a short run ends annealed, as with WSD or
// fairseq's polynomial_decay schedules, instead of at ~the peak · sqrt(warmup / steps)).
// A run whose end is re-estimated as it goes (a time budget) turns the line at the step of each new
// estimate: from `from` (0: the warmup's end) at `from_fraction` of the peak, straight down to 0 at
// the new end, so the rate never jumps.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attn {

// Where the learning rate falls linearly to 0. Kept once, in the training progress (and so in the
// checkpoints), and handed to the schedule at each step: a resumed run goes on along the same line.
struct DecayLine {
  std::int64_t end = 0;        // > 0: linear decay to 0 at this step; 0: the inverse square root
  std::int64_t from = 0;       // > warmup: the line starts here (the last re-estimate)...
  double from_fraction = 1.0;  // ...at this fraction of the peak
};

struct LearningRateSchedule {
  int d_model = 512;
  int warmup_steps = 4000;
  double scale = 1.0;

  // The rate at the end of the warmup.
  double peak() const { return scale / std::sqrt(static_cast<double>(d_model) * warmup_steps); }

  // The rate of update `step` (counted from 1), on `line` (none by default: the paper's curve).
  double rate(std::int64_t step, const DecayLine& line = {}) const {
    const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
    const double w = static_cast<double>(warmup_steps);
    const double rise = s * std::pow(w, -1.5);
    const double base = scale / std::sqrt(static_cast<double>(d_model));
    if (line.end <= 0) return base * std::min(1.0 / std::sqrt(s), rise);
    const double unscaled_peak = 1.0 / std::sqrt(w);  // peak() / base
    const bool turned = line.from > warmup_steps;
    const double from = turned ? static_cast<double>(line.from) : w;
    const double height = turned ? unscaled_peak * line.from_fraction : unscaled_peak;
    const double fall =
        height * std::max(0.0, static_cast<double>(line.end) - s) / std::max(1.0, static_cast<double>(line.end) - from);
    return base * std::min(rise, fall);
  }
};

}  // namespace attn
