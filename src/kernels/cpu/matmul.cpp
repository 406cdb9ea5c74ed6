// Backend::matmul: picks the kernel from the operands' types (the rules are backend.h's).
#include <string>

#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {
namespace {

// A product runs in bf16 where either operand is stored so or the backend's precision asks for it.
bool runs_in_bf16(MatmulPrecision precision, const MatrixRef& a, const MatrixRef& b) {
  return a.dtype == DType::bf16 || b.dtype == DType::bf16 || precision == MatmulPrecision::bf16;
}

}  // namespace

void matmul(MatmulPrecision precision, int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b,
            float beta, float* c, int ldc, const GemmBatch* batch) {
  const auto ld = [](const MatrixRef& x) { return static_cast<int>(x.ld); };
  if (a.dtype == DType::s8 || b.dtype == DType::s8) {
    ATTN_CHECK(a.dtype == DType::f32 && b.dtype == DType::s8 && a.trans == Trans::No && b.trans == Trans::Yes && !batch,
               std::string("an s8 product takes float activations times a transposed s8 weight, one product; got ") +
                   to_string(a.dtype) + (a.trans == Trans::Yes ? "ᵀ" : "") + " · " + to_string(b.dtype) +
                   (b.trans == Trans::Yes ? "ᵀ" : "") + (batch ? " batched" : ""));
    return gemm_s8(m, n, k, alpha, static_cast<const float*>(a.data), a.ld, b, beta, c, ldc);
  }
  const bool in_bf16 = runs_in_bf16(precision, a, b);
  if (batch) {
    if (in_bf16) return gemm_batched_mixed(m, n, k, alpha, a, b, beta, c, ldc, *batch);
    return gemm_batched(a.trans, b.trans, m, n, k, alpha, static_cast<const float*>(a.data), ld(a),
                        static_cast<const float*>(b.data), ld(b), beta, c, ldc, *batch);
  }
  if (in_bf16) return gemm_mixed(m, n, k, alpha, a, b, beta, c, ldc);
  gemm(a.trans, b.trans, m, n, k, alpha, static_cast<const float*>(a.data), ld(a), static_cast<const float*>(b.data),
       ld(b), beta, c, ldc);
}

void matmul_bias(MatmulPrecision precision, int m, int n, int k, const MatrixRef& a, const MatrixRef& b,
                 const float* bias, bool relu, float* c, Bf16* rounded) {
  ATTN_CHECK(bias || !relu, "matmul_bias applies ReLU after a bias only");
  const bool s8 = a.dtype == DType::s8 || b.dtype == DType::s8;
  if (!s8 && runs_in_bf16(precision, a, b) && gemm_mixed_bias(m, n, k, a, b, bias, relu, c, rounded)) return;
  matmul(precision, m, n, k, 1.0f, a, b, 0.0f, c, n, nullptr);
  if (!bias) {
    if (rounded) to_bf16(c, static_cast<std::int64_t>(m) * n, rounded);
  } else if (relu)
    add_bias_relu(c, bias, m, n, rounded);
  else
    add_bias(c, bias, m, n, rounded);
}

}  // namespace attn::cpu
