#include "nn/linear.h"

#include "core/error.h"

namespace attn::nn {

void Linear::forward(Backend& be, const float* x, std::int64_t rows, float* y, bool relu, int ldy) const {
  if (ldy == 0) ldy = out;
  be.matmul(static_cast<int>(rows), out, in, 1.0f, f32_matrix(x, in), weight_operand(), 0.0f, y, ldy, nullptr);
  if (!bias) return;
  if (ldy != out) {  // strided output (e.g. into a key/value cache): add the bias row by row
    for (std::int64_t r = 0; r < rows; ++r) {
      if (relu)
        be.add_bias_relu(y + r * ldy, bias, 1, out);
      else
        be.add_bias(y + r * ldy, bias, 1, out);
    }
    return;
  }
  if (relu)
    be.add_bias_relu(y, bias, rows, out);
  else
    be.add_bias(y, bias, rows, out);
}

void Linear::forward(Backend& be, const Bf16* x, std::int64_t rows, float* y) const {
  be.matmul(static_cast<int>(rows), out, in, 1.0f, bf16_matrix(x, in), weight_operand(), 0.0f, y, out, nullptr);
  if (bias) be.add_bias(y, bias, rows, out);
}

void Linear::backward(Backend& be, const float* x, const float* dy, std::int64_t rows, float* dx, bool accumulate_dx,
                      Bf16* dy_bf16) const {
  backward(be, x, false, dy, rows, dx, accumulate_dx, dy_bf16);
}

void Linear::backward(Backend& be, const Bf16* x, const float* dy, std::int64_t rows, float* dx, bool accumulate_dx,
                      Bf16* dy_bf16) const {
  backward(be, x, true, dy, rows, dx, accumulate_dx, dy_bf16);
}

void Linear::backward_from_bf16(Backend& be, const float* x, const Bf16* dy, std::int64_t rows, float* dx,
                                bool accumulate_dx) const {
  ATTN_CHECK(!bias, "a gradient given in bf16 only has no float rows to sum for the bias");
  const int r = static_cast<int>(rows);
  be.matmul(out, in, r, 1.0f, bf16_matrix(dy, out, Trans::Yes), f32_matrix(x, in), 1.0f, weight_grad, in, nullptr);
  if (dx)
    be.matmul(r, in, out, 1.0f, bf16_matrix(dy, out), f32_matrix(weight, in), accumulate_dx ? 1.0f : 0.0f, dx, in,
              nullptr);
}

void Linear::backward(Backend& be, const void* x, bool x_bf16, const float* dy, std::int64_t rows, float* dx,
                      bool accumulate_dx, Bf16* dy_bf16) const {
  const int r = static_cast<int>(rows);
  const float beta = accumulate_dx ? 1.0f : 0.0f;
  if (!x_bf16 && !dy_bf16) {  // float32 operands throughout
    if (bias) be.bias_grad(dy, rows, out, bias_grad);
    be.matmul(out, in, r, 1.0f, f32_matrix(dy, out, Trans::Yes), f32_matrix(static_cast<const float*>(x), in), 1.0f,
              weight_grad, in, nullptr);
    if (dx) be.matmul(r, in, out, 1.0f, f32_matrix(dy, out), f32_matrix(weight, in), beta, dx, in, nullptr);
    return;
  }
  const void* g = dy;
  if (dy_bf16 && bias)
    be.bias_grad_to_bf16(dy, rows, out, bias_grad, dy_bf16), g = dy_bf16;
  else if (dy_bf16)
    be.to_bf16(dy, rows * out, dy_bf16), g = dy_bf16;
  else if (bias)
    be.bias_grad(dy, rows, out, bias_grad);
  const bool g_bf16 = dy_bf16 != nullptr;
  be.matmul(out, in, r, 1.0f, float_or_bf16_matrix(g, g_bf16, out, Trans::Yes), float_or_bf16_matrix(x, x_bf16, in),
            1.0f, weight_grad, in, nullptr);
  if (dx)
    be.matmul(r, in, out, 1.0f, float_or_bf16_matrix(g, g_bf16, out), f32_matrix(weight, in), beta, dx, in, nullptr);
}

}  // namespace attn::nn
