// Backend::matmul: picks the kernel from the operands' types (the rules are backend.h's).
#include <string>

#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

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
  const bool in_bf16 = a.dtype == DType::bf16 || b.dtype == DType::bf16 || precision == MatmulPrecision::bf16;
  if (batch) {
    if (in_bf16) return gemm_batched_mixed(m, n, k, alpha, a, b, beta, c, ldc, *batch);
    return gemm_batched(a.trans, b.trans, m, n, k, alpha, static_cast<const float*>(a.data), ld(a),
                        static_cast<const float*>(b.data), ld(b), beta, c, ldc, *batch);
  }
  if (in_bf16) return gemm_mixed(m, n, k, alpha, a, b, beta, c, ldc);
  gemm(a.trans, b.trans, m, n, k, alpha, static_cast<const float*>(a.data), ld(a), static_cast<const float*>(b.data),
       ld(b), beta, c, ldc);
}

}  // namespace attn::cpu
