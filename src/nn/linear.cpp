#include "nn/linear.h"

#include "core/error.h"

namespace attn::nn {

void Linear::forward(Backend& be, Activations x, std::int64_t rows, float* y, bool relu, int ldy) const {
  if (ldy == 0) ldy = out;
  const int r = static_cast<int>(rows);
  if (bias && ldy == out) return be.matmul_bias(r, out, in, x.matrix(in), weight_operand(), bias, relu, y, nullptr);
  be.matmul(r, out, in, 1.0f, x.matrix(in), weight_operand(), 0.0f, y, ldy, nullptr);
  if (!bias) return;
  // Strided output (e.g. into a key/value cache): the bias added row by row.
  for (std::int64_t row = 0; row < rows; ++row) {
    if (relu)
      be.add_bias_relu(y + row * ldy, bias, 1, out, nullptr);
    else
      be.add_bias(y + row * ldy, bias, 1, out, nullptr);
  }
}

Activations Linear::forward_kept(Backend& be, Activations x, std::int64_t rows, float* y, RowBuffer kept,
                                 bool relu) const {
  if (kept.dtype == DType::f32 || !bias) {
    forward(be, x, rows, y, relu);
    return keep(be, y, rows * out, kept);
  }
  ATTN_CHECK(kept.dtype == DType::bf16 && kept.data, "rows are kept in float or in a bf16 buffer");
  be.matmul_bias(static_cast<int>(rows), out, in, x.matrix(in), weight_operand(), bias, relu, y,
                 static_cast<Bf16*>(kept.data));
  return kept.read();
}

void Linear::backward(Backend& be, Activations x, Activations dy, std::int64_t rows, float* dx, bool accumulate_dx,
                      RowBuffer dy_read, Activations relu_y, Bf16* dx_rounded) const {
  ATTN_CHECK(weight.dtype == DType::f32, "a layer with int8 weights has no backward pass (inference only)");
  // g: the gradient as both products read it (dy itself where it comes in bf16, its bias's
  // gradient summed by the pass that rounded it).
  Activations g = dy;
  ATTN_CHECK(!relu_y.data || (dy.dtype == DType::f32 && folds_relu(dy_read)),
             "ReLU's backward folds into a layer's backward only where its float gradient is rounded to bf16 with "
             "the bias summed");
  const bool in_float = dy.dtype == DType::f32;
  if (in_float && dy_read.dtype == DType::bf16) {
    const float* dy32 = static_cast<const float*>(dy.data);
    if (bias)
      be.bias_grad(dy32, rows, out, bias_grad, dy_read.data, DType::bf16, relu_y.data, relu_y.dtype);
    else
      keep(be, dy32, rows * out, dy_read);
    g = dy_read.read();
  } else if (in_float && bias) {
    be.bias_grad(static_cast<const float*>(dy.data), rows, out, bias_grad, nullptr, DType::f32, nullptr, DType::f32);
  }
  weight_backward(be, x, g, rows);
  if (dx) input_backward(be, g, rows, dx, accumulate_dx, dx_rounded);
}

void Linear::weight_backward(Backend& be, Activations x, Activations g, std::int64_t rows) const {
  ATTN_CHECK(weight.dtype == DType::f32, "a layer with int8 weights has no backward pass (inference only)");
  be.matmul(out, in, static_cast<int>(rows), 1.0f, g.matrix(out, Trans::Yes), x.matrix(in), 1.0f, weight_grad, in,
            nullptr);
}

void Linear::input_backward(Backend& be, Activations g, std::int64_t rows, float* dx, bool accumulate_dx,
                            Bf16* dx_rounded) const {
  ATTN_CHECK(weight.dtype == DType::f32, "a layer with int8 weights has no backward pass (inference only)");
  if (dx_rounded) {
    ATTN_CHECK(!accumulate_dx, "a gradient rounded to bf16 as its product stores it is not added to");
    return be.matmul_bias(static_cast<int>(rows), in, out, g.matrix(out), weight, nullptr, false, dx, dx_rounded);
  }
  be.matmul(static_cast<int>(rows), in, out, 1.0f, g.matrix(out), weight, accumulate_dx ? 1.0f : 0.0f, dx, in, nullptr);
}

}  // namespace attn::nn
