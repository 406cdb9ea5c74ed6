#pragma once
// The paper's schedule (section 5.3):
//   lr(step) = scale · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)
// rising linearly for `warmup` steps, then decaying with the inverse square root of the step.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attn {

struct LearningRateSchedule {
  int d_model = 512;
  int warmup_steps = 4000;
  double scale = 1.0;

  // step counts from 1.
  double operator()(std::int64_t step) const {
    const double s = static_cast<double>(std::max<std::int64_t>(step, 1));
    return scale / std::sqrt(static_cast<double>(d_model)) *
           std::min(1.0 / std::sqrt(s), s * std::pow(static_cast<double>(warmup_steps), -1.5));
  }
};

}  // namespace attn
