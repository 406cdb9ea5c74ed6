#pragma once
// The position-wise feed-forward network: FFN(x) = max(0, x·W1ᵀ + b1)·W2ᵀ + b2.
#include <cstdint>

#include "nn/linear.h"

namespace attn::nn {

struct FeedForward {
  Linear fc1;  // [d_ff, d_model]
  Linear fc2;  // [d_model, d_ff]

  // hidden [rows, d_ff] is kept for backward; y [rows, d_model].
  void forward(Backend& be, const float* x, std::int64_t rows, float* hidden, float* y) const;
  // dx += ∂L/∂x; d_hidden is scratch [rows, d_ff].
  void backward(Backend& be, const float* x, std::int64_t rows, const float* hidden, const float* dy,
                float* d_hidden, float* dx) const;
};

}  // namespace attn::nn
