#pragma once
// Adam over the model's one parameter buffer: the moment estimates live in two buffers of the
// same layout, so one kernel call updates every parameter. Optionally an exponential moving
// average of the weights follows each update in a third buffer of that layout.
#include <cstdint>

#include "kernels/device_buffer.h"
#include "model/transformer.h"

namespace attn {

struct AdamOptions {
  float beta1 = 0.9f;  // the paper's values
  float beta2 = 0.98f;
  float eps = 1e-9f;
  // > 0: after update t, average = d·average + (1 - d)·weights with d = min(ema_decay,
  // (1 + t) / (10 + t)) (the warmup of TensorFlow's ExponentialMovingAverage and Marian's
  // exponential smoothing, so that early updates are not swamped by the initial weights); the
  // average starts as the initial weights. 0: no average.
  double ema_decay = 0;
};

class AdamOptimizer {
 public:
  AdamOptimizer(Transformer& model, AdamOptions options = {});

  // One update with learning rate lr from the model's accumulated gradients, multiplied by
  // grad_scale first (gradient clipping). Counts steps from 1. Leaves the gradients zeroed, and the
  // parameters' bf16 rounding written where the model keeps one (Transformer::parameter_rounding).
  void step(float lr, float grad_scale = 1.0f);

  std::int64_t steps() const { return steps_; }
  const AdamOptions& options() const { return options_; }
  // The moment estimates, for checkpoints.
  float* first_moment() { return m_.data(); }
  float* second_moment() { return v_.data(); }
  void set_steps(std::int64_t steps) { steps_ = steps; }
  // The moving average of the weights (parameter layout), or null without one.
  bool has_average() const { return options_.ema_decay > 0; }
  float* average() { return has_average() ? ema_.data() : nullptr; }
  // Starts the average from the model's current weights (a fresh run, or one resumed from a
  // checkpoint that holds none).
  void reset_average();
  // The decay of the average at update t (counted from 1).
  static double average_decay(double ema_decay, std::int64_t t);

  // Runs f with the model holding the average in place of its weights (the model as delivered:
  // validation, model folders), then puts the weights back exactly. Without an average, just f().
  template <class F>
  void with_average_weights(F&& f) {
    if (!has_average()) return f();
    put_average_in_model();
    struct Restore {
      AdamOptimizer* self;
      ~Restore() { self->restore_weights(); }
    } restore{this};
    f();
  }

 private:
  void put_average_in_model();  // the weights to scratch, the average into the model
  void restore_weights();       // the weights back from scratch

  Transformer& model_;
  AdamOptions options_;
  DeviceBuffer<float> m_, v_;
  DeviceBuffer<float> ema_, scratch_;  // the average, and room for the weights while it is in the model
  std::int64_t steps_ = 0;
};

}  // namespace attn
