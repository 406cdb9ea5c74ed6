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

  // The hidden layer's activations [rows, d_ff]: the first product's output (f32), and what the
  // second product and the backward pass read (kept: f32 itself, or its bf16 copy: nn::keep).
  struct Hidden {
    float* f32 = nullptr;
    RowBuffer kept;
  };

  // y [rows, d_model]. The hidden activations kept are those after dropout.
  void forward(Backend& be, Activations x, std::int64_t rows, const Hidden& hidden, float* y,
               const HiddenDropout& dropout = {}) const;
  // dx += ∂L/∂x; d_hidden is scratch [rows, d_ff]; dy and dy_read as in Linear::backward.
  void backward(Backend& be, Activations x, std::int64_t rows, const Hidden& hidden, Activations dy, float* d_hidden,
                float* dx, RowBuffer dy_read = {}, const HiddenDropout& dropout = {}) const;
};

}  // namespace attn::nn
