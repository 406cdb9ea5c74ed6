#pragma once
// The position-wise feed-forward network: FFN(x) = max(0, x·W1ᵀ + b1)·W2ᵀ + b2.
#include <cstdint>

#include "nn/linear.h"

namespace attn::nn {

struct FeedForward {
  Linear fc1;  // [d_ff, d_model]
  Linear fc2;  // [d_model, d_ff]

  // The hidden layer's activations [rows, d_ff], kept for backward: in float, or where the
  // backend keeps bf16 activations and `bf16` is given, in bf16 (then `f32` is only scratch).
  struct Hidden {
    float* f32 = nullptr;
    Bf16* bf16 = nullptr;
  };

  // y [rows, d_model].
  void forward(Backend& be, const float* x, std::int64_t rows, const Hidden& hidden, float* y) const;
  // dx += ∂L/∂x; d_hidden is scratch [rows, d_ff], dy_bf16 too (see Linear::backward).
  void backward(Backend& be, const float* x, std::int64_t rows, const Hidden& hidden, const float* dy, float* d_hidden,
                float* dx, Bf16* dy_bf16 = nullptr) const;
};

}  // namespace attn::nn
