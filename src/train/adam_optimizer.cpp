#include "train/adam_optimizer.h"

namespace attn {

AdamOptimizer::AdamOptimizer(Transformer& model, AdamOptions options) : model_(model), options_(options) {
  Backend& be = model.backend();
  const auto n = static_cast<std::size_t>(model.parameter_count());
  m_.resize(be, n);
  v_.resize(be, n);
  be.fill(m_.data(), model.parameter_count(), 0.0f);
  be.fill(v_.data(), model.parameter_count(), 0.0f);
}

void AdamOptimizer::step(float lr, float grad_scale) {
  ++steps_;
  const AdamHyper hyper{lr, options_.beta1, options_.beta2, options_.eps, grad_scale, steps_};
  model_.backend().adam(model_.parameters(), model_.gradients(), m_.data(), v_.data(), model_.parameter_count(), hyper);
}

}  // namespace attn
