// Matrix products through oneDNN's sgemm (row-major), without any environment variable (OpenBLAS
// 0.3.21 needs OPENBLAS_CORETYPE). The rates per CPU are bench/gemm_bench's and train_step_bench's
// to measure, not this comment's. The route per layout below was chosen with bench/gemm_bench on
// Zen 4; where one route's single-call rate moves between runs by more than the gap between the
// routes, the choice stays as it is.
#include <dnnl.h>
#include <omp.h>

#include <vector>

#include "core/error.h"
#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"

namespace attn::cpu {

static char trans_char(Trans t) { return t == Trans::Yes ? 'T' : 'N'; }

void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
          float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // C = beta·C: oneDNN's sgemm leaves C as it is when k is 0
    for (int i = 0; i < m; ++i) {
      float* ci = c + static_cast<std::int64_t>(i) * ldc;
      for (int j = 0; j < n; ++j) ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
    }
    return;
  }
  if (ta == Trans::No && tb == Trans::Yes && m >= 16 && m <= 256 &&
      run_matmul_if_fast(matmul_desc(ta, tb, m, n, k, lda, ldb, ldc, alpha, beta), a, b, c)) {
    // A decoding step's rows through a layer (beam 4 at batch 32: 128 × 256 × 1024): oneDNN's
    // brgemm matmul, compiled once per shape, ran these faster than sgemm on Zen 4, and than the
    // transposed route below (bench/gemm_bench's "decode" lines compare the three).
    return;
  }
  if (ta == Trans::No && tb == Trans::Yes && m >= 16 && m <= 256 && n >= 4 * m) {
    // Where oneDNN has no brgemm kernel for such rows (a CPU without AVX-512, say), a few rows
    // through a wide layer (x·Wᵀ in a decoding step: 32 × 2048 × 512): compute the transpose W·xᵀ
    // and copy it back; sgemm ran the shape itself far slower than its transpose on Zen 4 (on Zen 3
    // the two are close). bench/gemm_bench's "decode" lines compare the routes on the machine.
    thread_local std::vector<float> transposed;
    transposed.resize(static_cast<std::size_t>(m) * n);
    const dnnl_status_t st = dnnl_sgemm('N', 'T', n, m, k, alpha, b, ldb, a, lda, 0.0f, transposed.data(), m);
    ATTN_CHECK(st == dnnl_success, "dnnl_sgemm failed with status " + std::to_string(st));
    for (int i = 0; i < m; ++i) {
      float* ci = c + static_cast<std::int64_t>(i) * ldc;
      const float* ti = transposed.data() + i;
      if (beta == 0.0f)
        for (int j = 0; j < n; ++j) ci[j] = ti[static_cast<std::int64_t>(j) * m];
      else
        for (int j = 0; j < n; ++j) ci[j] = ti[static_cast<std::int64_t>(j) * m] + beta * ci[j];
    }
    return;
  }
  if (ta == Trans::No && tb == Trans::Yes && m >= 1024 && n >= 128 && n <= k) {
    // Many rows into a narrow layer (the FFN's second product, 4096 × 256 × 1024): oneDNN's
    // brgemm matmul runs it faster than sgemm; where n > k sgemm is the faster of the two, so it
    // keeps those (bench/gemm_bench).
    return run_matmul(matmul_desc(ta, tb, m, n, k, lda, ldb, ldc, alpha, beta), a, b, c);
  }
  const dnnl_status_t st = dnnl_sgemm(trans_char(ta), trans_char(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  ATTN_CHECK(st == dnnl_success, "dnnl_sgemm failed with status " + std::to_string(st));
}

// C = alpha·op(A)·op(B) + beta·C for products too small for oneDNN's per-call overhead to pay
// off: one decoding step's attention is 1×t×64 per (hypothesis, head), thousands of calls a step.
static void small_gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                       int ldb, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    float* ci = c + static_cast<std::int64_t>(i) * ldc;
    for (int j = 0; j < n; ++j) ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
    auto a_at = [&](int p) {
      return ta == Trans::No ? a[static_cast<std::int64_t>(i) * lda + p] : a[static_cast<std::int64_t>(p) * lda + i];
    };
    if (tb == Trans::No) {  // rows of B, contiguous over j
      for (int p = 0; p < k; ++p) {
        const float ap = alpha * a_at(p);
        const float* bp = b + static_cast<std::int64_t>(p) * ldb;
#pragma omp simd
        for (int j = 0; j < n; ++j) ci[j] += ap * bp[j];
      }
    } else {  // dot products with rows of B
      for (int j = 0; j < n; ++j) {
        const float* bj = b + static_cast<std::int64_t>(j) * ldb;
        float sum = 0.0f;
        if (ta == Trans::No) {
          const float* ai = a + static_cast<std::int64_t>(i) * lda;
#pragma omp simd reduction(+ : sum)
          for (int p = 0; p < k; ++p) sum += ai[p] * bj[p];
        } else {
          for (int p = 0; p < k; ++p) sum += a_at(p) * bj[p];
        }
        ci[j] += alpha * sum;
      }
    }
  }
}

namespace {

// A batched product as one single-threaded sgemm per block, the blocks shared out over the
// threads; bf16 operands (A and/or B) are widened block by block first.
void sgemm_per_block(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                     int ldc, const GemmBatch& batch) {
  const Trans ta = a.trans, tb = b.trans;
  const int a_rows = ta == Trans::Yes ? k : m, a_cols = ta == Trans::Yes ? m : k;
  const int b_rows = tb == Trans::Yes ? n : k, b_cols = tb == Trans::Yes ? k : n;
  const int count = batch.outer * batch.inner;
  bool ok = true;
#pragma omp parallel reduction(&& : ok)
  {
    thread_local std::vector<float> a_wide, b_wide;
#pragma omp for schedule(static)
    for (int i = 0; i < count; ++i) {
      const int o = i / batch.inner, j = i % batch.inner;
      const std::int64_t a_at = o * batch.a_outer + j * batch.a_inner, b_at = o * batch.b_outer + j * batch.b_inner;
      const FloatBlock ai = float_block(a, a_at, a_rows, a_cols, a_wide);
      const FloatBlock bi = float_block(b, b_at, b_rows, b_cols, b_wide);
      ok = dnnl_sgemm(trans_char(ta), trans_char(tb), m, n, k, alpha, ai.data, ai.ld, bi.data, bi.ld, beta,
                      c + o * batch.c_outer + j * batch.c_inner, ldc) == dnnl_success &&
           ok;
    }
  }
  ATTN_CHECK(ok, "dnnl_sgemm failed in a batched product");
}

}  // namespace

void gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                  int ldb, float beta, float* c, int ldc, const GemmBatch& batch) {
  const int count = batch.outer * batch.inner;
  if (m <= 4) {  // decoding steps: a few query rows per (hypothesis, head)
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(count) * m * n * k > (1 << 15))
    for (int i = 0; i < count; ++i) {
      const int o = i / batch.inner, j = i % batch.inner;
      small_gemm(ta, tb, m, n, k, alpha, a + o * batch.a_outer + j * batch.a_inner, lda,
                 b + o * batch.b_outer + j * batch.b_inner, ldb, beta, c + o * batch.c_outer + j * batch.c_inner, ldc);
    }
    return;
  }
  // Attention's blocks (e.g. 32×32×64, hundreds per call): the AVX-512 small-block kernel.
  const MatrixRef a_ref = f32_matrix(a, lda, ta), b_ref = f32_matrix(b, ldb, tb);
  if (small_gemm_batched(m, n, k, alpha, a_ref, b_ref, beta, c, ldc, batch)) return;
  // Larger blocks (or no AVX-512): one batched oneDNN primitive where it has its brgemm kernel for
  // the layout (~4× a loop of sgemm calls); a broadcast operand (stride 0) takes the loop.
  const bool broadcast = (batch.outer > 1 && (batch.a_outer == 0 || batch.b_outer == 0 || batch.c_outer == 0)) ||
                         (batch.inner > 1 && (batch.a_inner == 0 || batch.b_inner == 0 || batch.c_inner == 0));
  if (!broadcast) {
    MatmulDesc d = matmul_desc(ta, tb, m, n, k, lda, ldb, ldc, alpha, beta);
    d.outer = batch.outer, d.inner = batch.inner;
    d.a_outer = batch.a_outer, d.a_inner = batch.a_inner;
    d.b_outer = batch.b_outer, d.b_inner = batch.b_inner;
    d.c_outer = batch.c_outer, d.c_inner = batch.c_inner;
    if (run_matmul_if_fast(d, a, b, c)) return;
  }
  // Otherwise one single-threaded sgemm per thread beats splitting each product over the threads.
  sgemm_per_block(m, n, k, alpha, a_ref, b_ref, beta, c, ldc, batch);
}

void gemm_batched_mixed(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                        int ldc, const GemmBatch& batch) {
  if (small_gemm_batched_bf16(m, n, k, alpha, a, b, beta, c, ldc, batch)) return;
  if (small_gemm_batched(m, n, k, alpha, a, b, beta, c, ldc, batch)) return;
  sgemm_per_block(m, n, k, alpha, a, b, beta, c, ldc, batch);
}

}  // namespace attn::cpu
