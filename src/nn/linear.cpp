#include "nn/linear.h"

#include "core/error.h"

namespace attn::nn {

void Linear::forward(Backend& be, Activations x, std::int64_t rows, float* y, bool relu, int ldy) const {
  if (ldy == 0) ldy = out;
  be.matmul(static_cast<int>(rows), out, in, 1.0f, x.matrix(in), weight_operand(), 0.0f, y, ldy, nullptr);
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

void Linear::backward(Backend& be, Activations x, Activations dy, std::int64_t rows, float* dx, bool accumulate_dx,
                      RowBuffer dy_read) const {
  ATTN_CHECK(weight.dtype == DType::f32, "a layer with int8 weights has no backward pass (inference only)");
  const int r = static_cast<int>(rows);
  // g: the gradient as both products read it.
  Activations g = dy;
  if (dy.dtype != DType::f32) {
    ATTN_CHECK(!bias, "a gradient given in bf16 only has no float rows to sum for the bias");
  } else if (dy_read.dtype == DType::bf16) {
    const float* dy32 = static_cast<const float*>(dy.data);
    if (bias)
      be.bias_grad(dy32, rows, out, bias_grad, dy_read.data, DType::bf16);
    else
      keep(be, dy32, rows * out, dy_read);
    g = dy_read.read();
  } else if (bias) {
    be.bias_grad(static_cast<const float*>(dy.data), rows, out, bias_grad, nullptr, DType::f32);
  }
  be.matmul(out, in, r, 1.0f, g.matrix(out, Trans::Yes), x.matrix(in), 1.0f, weight_grad, in, nullptr);
  if (dx) be.matmul(r, in, out, 1.0f, g.matrix(out), weight, accumulate_dx ? 1.0f : 0.0f, dx, in, nullptr);
}

}  // namespace attn::nn
