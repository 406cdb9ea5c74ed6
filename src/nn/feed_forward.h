#pragma once
// The position-wise feed-forward network: FFN(x) = dropout(max(0, x·W1ᵀ + b1))·W2ᵀ + b2, the
// dropout on the hidden layer being the optional activation dropout (rate 0: the paper's FFN).
#include <cstdint>

#include "nn/linear.h"

namespace attn::nn {

// The hidden layer's dropout: its rate and the seed of its mask (the same in both passes).
struct HiddenDropout {
  float rate = 0;
  std::uint64_t seed = 0;
};

struct FeedForward {
  Linear fc1;  // [d_ff, d_model]
  Linear fc2;  // [d_model, d_ff]

  // The hidden layer's activations [rows, d_ff], kept for backward: in float, or where the
  // backend keeps bf16 activations and `bf16` is given, in bf16 (then `f32` is only scratch).
  struct Hidden {
    float* f32 = nullptr;
    Bf16* bf16 = nullptr;
  };

  // y [rows, d_model]. The hidden activations kept are those after dropout.
  void forward(Backend& be, const float* x, std::int64_t rows, const Hidden& hidden, float* y,
               const HiddenDropout& dropout = {}) const;
  // dx += ∂L/∂x; d_hidden is scratch [rows, d_ff], dy_bf16 too (see Linear::backward).
  void backward(Backend& be, const float* x, std::int64_t rows, const Hidden& hidden, const float* dy, float* d_hidden,
                float* dx, Bf16* dy_bf16 = nullptr, const HiddenDropout& dropout = {}) const;
};

}  // namespace attn::nn
