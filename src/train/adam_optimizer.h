#pragma once
// Adam over the model's one parameter buffer: the moment estimates live in two buffers of the
// same layout, so one kernel call updates every parameter.
#include <cstdint>

#include "kernels/device_buffer.h"
#include "model/transformer.h"

namespace attn {

struct AdamOptions {
  float beta1 = 0.9f;  // the paper's values
  float beta2 = 0.98f;
  float eps = 1e-9f;
};

class AdamOptimizer {
 public:
  AdamOptimizer(Transformer& model, AdamOptions options = {});

  // One update with learning rate lr from the model's accumulated gradients, multiplied by
  // grad_scale first (gradient clipping). Counts steps from 1.
  void step(float lr, float grad_scale = 1.0f);

  std::int64_t steps() const { return steps_; }
  const AdamOptions& options() const { return options_; }
  // The moment estimates, for checkpoints.
  float* first_moment() { return m_.data(); }
  float* second_moment() { return v_.data(); }
  void set_steps(std::int64_t steps) { steps_ = steps; }

 private:
  Transformer& model_;
  AdamOptions options_;
  DeviceBuffer<float> m_, v_;
  std::int64_t steps_ = 0;
};

}  // namespace attn
