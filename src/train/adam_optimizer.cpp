#include "train/adam_optimizer.h"

#include <algorithm>
#include <utility>

namespace attn {

AdamOptimizer::AdamOptimizer(Transformer& model, AdamOptions options) : model_(model), options_(options) {
  Backend& be = model.backend();
  const auto n = static_cast<std::size_t>(model.parameter_count());
  m_.resize(be, n);
  v_.resize(be, n);
  be.fill(m_.data(), model.parameter_count(), 0.0f);
  be.fill(v_.data(), model.parameter_count(), 0.0f);
  if (has_average()) {
    ema_.resize(be, n);
    reset_average();
  }
}

void AdamOptimizer::step(float lr, float grad_scale) {
  ++steps_;
  const AdamHyper hyper{lr, options_.beta1, options_.beta2, options_.eps, grad_scale, steps_};
  Backend& be = model_.backend();
  // One pass: the update, the gradient zeroed for the next one, and the parameters' bf16 rounding
  // where the model's products read one.
  Bf16* rounded = model_.parameter_rounding();
  be.adam(model_.parameters(), model_.gradients(), m_.data(), v_.data(), model_.parameter_count(), hyper, rounded);
  if (rounded) model_.parameters_rounded();
  model_.gradients_zeroed();
  if (has_average())
    be.moving_average(ema_.data(), std::as_const(model_).parameters(), model_.parameter_count(),
                      static_cast<float>(average_decay(options_.ema_decay, steps_)));
}

double AdamOptimizer::average_decay(double ema_decay, std::int64_t t) {
  return std::min(ema_decay, (1.0 + static_cast<double>(t)) / (10.0 + static_cast<double>(t)));
}

void AdamOptimizer::reset_average() {
  if (!has_average()) return;
  model_.backend().copy(ema_.data(), std::as_const(model_).parameters(),
                        static_cast<std::size_t>(model_.parameter_count()) * sizeof(float));
}

void AdamOptimizer::put_average_in_model() {
  Backend& be = model_.backend();
  const auto bytes = static_cast<std::size_t>(model_.parameter_count()) * sizeof(float);
  if (scratch_.size() == 0) scratch_.resize(be, static_cast<std::size_t>(model_.parameter_count()));
  be.copy(scratch_.data(), std::as_const(model_).parameters(), bytes);
  be.copy(model_.parameters(), ema_.data(), bytes);
}

void AdamOptimizer::restore_weights() {
  model_.backend().copy(model_.parameters(), scratch_.data(),
                        static_cast<std::size_t>(model_.parameter_count()) * sizeof(float));
}

}  // namespace attn
