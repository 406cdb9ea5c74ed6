#pragma once
// y = x·Wᵀ + b with W stored [out, in] (PyTorch's nn.Linear layout), and its gradient.
#include <cstdint>

#include "kernels/backend.h"

namespace attn::nn {

struct Linear {
  const float* weight = nullptr;  // [out, in]
  const float* bias = nullptr;    // [out]
  float* weight_grad = nullptr;
  float* bias_grad = nullptr;
  int in = 0, out = 0;

  // The output rows [first, first + count) of this layer as a layer of its own (a slice of a
  // fused projection such as W_q, W_k, W_v stacked), sharing the weights and gradients.
  Linear rows(int first, int count) const {
    return {weight + static_cast<std::int64_t>(first) * in, bias + first,
            weight_grad ? weight_grad + static_cast<std::int64_t>(first) * in : nullptr,
            bias_grad ? bias_grad + first : nullptr, in, count};
  }

  // y [rows, out] (row stride ldy, default out) = x [rows, in] · Wᵀ + b, optionally through ReLU.
  void forward(Backend& be, const float* x, std::int64_t rows, float* y, bool relu = false,
               int ldy = 0) const;
  // Accumulates ∂W += dyᵀ·x and ∂b += Σ dy; dx = dy·W, added to dx's contents if accumulate_dx.
  // dx may be null when the input needs no gradient.
  void backward(Backend& be, const float* x, const float* dy, std::int64_t rows, float* dx,
                bool accumulate_dx) const;
  // The same with x kept in bf16 (Backend::keeps_bf16_activations); y and dy stay float.
  void forward(Backend& be, const Bf16* x, std::int64_t rows, float* y) const;
  void backward(Backend& be, const Bf16* x, const float* dy, std::int64_t rows, float* dx,
                bool accumulate_dx) const;

 private:
  // ∂b += Σ dy and dx = dy·W: what both backward passes share.
  void bias_and_input_gradients(Backend& be, const float* dy, std::int64_t rows, float* dx,
                                bool accumulate_dx) const;
};

}  // namespace attn::nn
