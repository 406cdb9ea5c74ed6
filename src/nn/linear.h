#pragma once
// y = x·Wᵀ + b with W stored [out, in] (PyTorch's nn.Linear layout), and its gradient.
#include <cstdint>

#include "kernels/backend.h"
#include "nn/activations.h"

namespace attn::nn {

struct Linear {
  // W [out, in] as stored, its type explicit: float (f32_matrix(w, in): what training reads and
  // updates), or, for inference with int8 weights, s8 rows with their scales and row sums
  // (s8_matrix: forward only).
  MatrixRef weight{};
  const float* bias = nullptr;  // [out]; none if null
  float* weight_grad = nullptr;
  float* bias_grad = nullptr;
  int in = 0, out = 0;

  // W as the product's right operand (transposed).
  MatrixRef weight_operand() const {
    MatrixRef w = weight;
    w.trans = Trans::Yes;
    return w;
  }

  // y [rows, out] (row stride ldy, default out) = x [rows, in] · Wᵀ + b, optionally through ReLU
  // (without a bias: no ReLU either). x is float, or bf16 where the backend keeps bf16 activations.
  void forward(Backend& be, Activations x, std::int64_t rows, float* y, bool relu = false, int ldy = 0) const;
  // The same y as the later passes read it (nn::keep): y itself (kept is y, float), or rounded into
  // kept's bf16 buffer where the bias is added (Backend::matmul_bias; y is then scratch).
  Activations forward_kept(Backend& be, Activations x, std::int64_t rows, float* y, RowBuffer kept,
                           bool relu = false) const;
  // Accumulates ∂W += dyᵀ·x and ∂b += Σ dy; dx = dy·W, added to dx's contents if accumulate_dx.
  // dx may be null when the input needs no gradient. x as in forward. dy is float, or bf16 as both
  // products read it, ∂b then summed already by the pass that rounded it (the loss writes the
  // logits' gradient so; residual_norm_backward the gradient of a sublayer's output).
  // dy_read: the type both products read a float dy in — f32 (dy as it is; no buffer), or bf16
  // where the backend keeps bf16 activations (dy rounded once into its buffer, rows·out: scratch).
  // relu_y: where the layer's output went through ReLU and dy is the gradient of ReLU's output,
  // that output (rows·out, float or bf16): dy·(relu_y > 0) is what the products read and the bias
  // sums, masked on the pass that rounds dy (dy_read bf16; dy itself is left as it was).
  // dx_rounded: as input_backward's.
  void backward(Backend& be, Activations x, Activations dy, std::int64_t rows, float* dx, bool accumulate_dx,
                RowBuffer dy_read = {}, Activations relu_y = {}, Bf16* dx_rounded = nullptr) const;
  // Whether backward takes relu_y with this dy_read: the mask folds into the pass that rounds dy
  // and sums the bias (otherwise the caller applies relu_backward to dy first).
  bool folds_relu(RowBuffer dy_read) const { return bias && dy_read.dtype == DType::bf16 && dy_read.data; }
  // backward's two products alone, for a gradient g given as they read it with the bias's gradient
  // summed already (attention's, rounded to bf16 where it is computed): ∂W += gᵀ·x,
  void weight_backward(Backend& be, Activations x, Activations g, std::int64_t rows) const;
  // and dx = g·W, added to dx's contents if accumulate_dx; or, given dx_rounded, rounded to bf16
  // there as the product stores it (as to_bf16 rounds; not accumulated, dx then scratch): where only
  // products that round their inputs read dx (attention's gradient from its output projection).
  void input_backward(Backend& be, Activations g, std::int64_t rows, float* dx, bool accumulate_dx,
                      Bf16* dx_rounded = nullptr) const;
};

}  // namespace attn::nn
