// Matrix products through oneDNN's sgemm (row-major), measured at 300-415 GFLOP/s on this
// machine's two cores without any environment variable (OpenBLAS 0.3.21 needs OPENBLAS_CORETYPE).
#include <dnnl.h>
#include <omp.h>

#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

static char trans_char(Trans t) { return t == Trans::Yes ? 'T' : 'N'; }

void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  const dnnl_status_t st =
      dnnl_sgemm(trans_char(ta), trans_char(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  ATTN_CHECK(st == dnnl_success, "dnnl_sgemm failed with status " + std::to_string(st));
}

void gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc, const GemmBatch& batch) {
  const int count = batch.outer * batch.inner;
  // Attention's matrices are small (e.g. 32×32×64): one single-threaded product per thread beats
  // splitting each product over the threads. oneDNN runs sequentially inside a parallel region.
  bool ok = true;
#pragma omp parallel for schedule(static) reduction(&& : ok)
  for (int i = 0; i < count; ++i) {
    const int o = i / batch.inner, j = i % batch.inner;
    const float* ai = a + o * batch.a_outer + j * batch.a_inner;
    const float* bi = b + o * batch.b_outer + j * batch.b_inner;
    float* ci = c + o * batch.c_outer + j * batch.c_inner;
    ok = dnnl_sgemm(trans_char(ta), trans_char(tb), m, n, k, alpha, ai, lda, bi, ldb, beta, ci,
                    ldc) == dnnl_success && ok;
  }
  ATTN_CHECK(ok, "dnnl_sgemm failed in a batched product");
}

}  // namespace attn::cpu
