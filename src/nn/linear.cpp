#include "nn/linear.h"

namespace attn::nn {

void Linear::forward(Backend& be, const float* x, std::int64_t rows, float* y, bool relu,
                     int ldy) const {
  if (ldy == 0) ldy = out;
  be.gemm(Trans::No, Trans::Yes, static_cast<int>(rows), out, in, 1.0f, x, in, weight, in, 0.0f, y, ldy);
  if (ldy != out) {  // strided output (e.g. into a key/value cache): add the bias row by row
    for (std::int64_t r = 0; r < rows; ++r) {
      if (relu) be.add_bias_relu(y + r * ldy, bias, 1, out);
      else be.add_bias(y + r * ldy, bias, 1, out);
    }
    return;
  }
  if (relu) be.add_bias_relu(y, bias, rows, out);
  else be.add_bias(y, bias, rows, out);
}

void Linear::forward(Backend& be, const Bf16* x, std::int64_t rows, float* y) const {
  be.gemm_mixed(Trans::No, Trans::Yes, static_cast<int>(rows), out, in, 1.0f, x, true, in, weight, false, in, 0.0f,
                y, out);
  be.add_bias(y, bias, rows, out);
}

void Linear::backward(Backend& be, const Bf16* x, const float* dy, std::int64_t rows, float* dx,
                      bool accumulate_dx) const {
  be.gemm_mixed(Trans::Yes, Trans::No, out, in, static_cast<int>(rows), 1.0f, dy, false, out, x, true, in, 1.0f,
                weight_grad, in);
  bias_and_input_gradients(be, dy, rows, dx, accumulate_dx);
}

void Linear::backward(Backend& be, const float* x, const float* dy, std::int64_t rows, float* dx,
                      bool accumulate_dx) const {
  be.gemm(Trans::Yes, Trans::No, out, in, static_cast<int>(rows), 1.0f, dy, out, x, in, 1.0f, weight_grad, in);
  bias_and_input_gradients(be, dy, rows, dx, accumulate_dx);
}

void Linear::bias_and_input_gradients(Backend& be, const float* dy, std::int64_t rows, float* dx,
                                      bool accumulate_dx) const {
  be.bias_grad(dy, rows, out, bias_grad);
  if (dx)
    be.gemm(Trans::No, Trans::No, static_cast<int>(rows), in, out, 1.0f, dy, out, weight, in,
            accumulate_dx ? 1.0f : 0.0f, dx, in);
}

}  // namespace attn::nn
