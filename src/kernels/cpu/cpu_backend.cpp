// The CPU backend: forwards the kernel interface to the functions in kernels/cpu/.
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace attn {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(MatmulPrecision precision) : precision_(precision) {}
  std::string name() const override { return precision_ == MatmulPrecision::fp32 ? "cpu" : "cpu_bf16"; }

  void* allocate(std::size_t bytes) override {
    // Large buffers (parameters, gradients, the workspace) on 2 MB pages: a training step walks
    // hundreds of megabytes, and with 4 KB pages each new page costs a TLB miss (the gain:
    // bench/train_step_bench, against a run with transparent huge pages set to "never"). Debian enables transparent
    // huge pages only where asked (madvise). Smaller ones 64-byte aligned: one cache line, one AVX-512 register.
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    const bool huge = bytes >= kHugePage;
    const std::size_t alignment = huge ? kHugePage : 64;
    const std::size_t rounded = bytes == 0 ? alignment : (bytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, rounded);
    if (!p) throw std::bad_alloc();
    if (huge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: ignored where unsupported
    return p;
  }
  void deallocate(void* p) override { std::free(p); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes) std::memmove(dst, src, bytes);
  }
  void fill(float* x, std::int64_t n, float value) override { cpu::fill(x, n, value); }

  void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    if (precision_ == MatmulPrecision::bf16)
      return cpu::gemm_bf16(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    cpu::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  bool keeps_bf16_activations() const override { return precision_ == MatmulPrecision::bf16; }
  void to_bf16(const float* x, std::int64_t n, Bf16* y) override { cpu::to_bf16(x, n, y); }
  void gemm_mixed(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a_bf16, int lda,
                  const void* b, bool b_bf16, int ldb, float beta, float* c, int ldc) override {
    cpu::gemm_mixed(ta, tb, m, n, k, alpha, a, a_bf16, lda, b, b_bf16, ldb, beta, c, ldc);
  }
  void relu_backward(float* dy, const Bf16* y, std::int64_t n) override { cpu::relu_backward(dy, y, n); }
  void bias_grad_to_bf16(const float* dy, std::int64_t rows, int cols, float* dbias, Bf16* dy_bf16) override {
    cpu::bias_grad(dy, rows, cols, dbias, dy_bf16);
  }
  void gemm_batched_mixed(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a_bf16, int lda,
                          const void* b, bool b_bf16, int ldb, float beta, float* c, int ldc,
                          const GemmBatch& batch) override {
    cpu::gemm_batched_mixed(ta, tb, m, n, k, alpha, a, a_bf16, lda, b, b_bf16, ldb, beta, c, ldc, batch);
  }
  void gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc, const GemmBatch& batch) override {
    cpu::gemm_batched(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch);
  }

  void add(const float* a, const float* b, float* y, std::int64_t n) override { cpu::add(a, b, y, n); }
  void accumulate(const float* x, float* y, std::int64_t n) override { cpu::accumulate(x, y, n); }
  void scale(float* x, std::int64_t n, float s) override { cpu::scale(x, n, s); }
  void add_bias(float* x, const float* bias, std::int64_t rows, int cols) override {
    cpu::add_bias(x, bias, rows, cols);
  }
  void add_bias_relu(float* x, const float* bias, std::int64_t rows, int cols) override {
    cpu::add_bias_relu(x, bias, rows, cols);
  }
  void relu_backward(float* dy, const float* y, std::int64_t n) override { cpu::relu_backward(dy, y, n); }
  void bias_grad(const float* dy, std::int64_t rows, int cols, float* dbias) override {
    cpu::bias_grad(dy, rows, cols, dbias);
  }
  double sum_squares(const float* x, std::int64_t n) override { return cpu::sum_squares(x, n); }
  void dropout(const float* x, float* y, std::int64_t n, float p, std::uint64_t seed) override {
    cpu::dropout(x, y, n, p, seed);
  }

  void layernorm(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                 std::int64_t rows, int cols, float eps) override {
    cpu::layernorm(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  }
  void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma,
                          float* dx, float* dgamma, float* dbeta, std::int64_t rows, int cols) override {
    cpu::layernorm_backward(dy, x, mean, rstd, gamma, dx, dgamma, dbeta, rows, cols);
  }

  void attention_softmax(float* scores, int batch, int heads, int tq, int tk, const AttentionMask& mask,
                         float scale) override {
    cpu::attention_softmax(scores, batch, heads, tq, tk, mask, scale);
  }
  void attention_softmax_backward(float* dprobs, const float* probs, std::int64_t rows, int tk, float scale) override {
    cpu::attention_softmax_backward(dprobs, probs, rows, tk, scale);
  }

  void embedding(const std::int32_t* ids, std::int64_t n, const float* table, int dim, float scale,
                 const float* positions, int seq_len, float* out) override {
    cpu::embedding(ids, n, table, dim, scale, positions, seq_len, out);
  }
  void embedding_backward(const std::int32_t* ids, std::int64_t n, const float* dout, int dim, float scale,
                          float* dtable) override {
    cpu::embedding_backward(ids, n, dout, dim, scale, dtable);
  }
  void positions_backward(const float* dout, int batch, int seq_len, int dim, float* dpositions) override {
    cpu::positions_backward(dout, batch, seq_len, dim, dpositions);
  }

  LossSums cross_entropy(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab, float smoothing,
                         int ignore_id, float grad_scale, float* row_nll) override {
    return cpu::cross_entropy(logits, targets, rows, vocab, smoothing, ignore_id, grad_scale, row_nll);
  }
  LossSums cross_entropy_to_bf16(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab,
                                 float smoothing, int ignore_id, float grad_scale, Bf16* grad) override {
    return cpu::cross_entropy(logits, targets, rows, vocab, smoothing, ignore_id, grad_scale, nullptr, grad);
  }
  void log_softmax(float* x, std::int64_t rows, int cols) override { cpu::log_softmax(x, rows, cols); }
  void topk(const float* x, std::int64_t rows, int cols, int k, float* values, std::int32_t* indices) override {
    cpu::topk(x, rows, cols, k, values, indices);
  }
  void gather_rows(const float* src, std::int64_t src_stride, const std::int32_t* indices, std::int64_t rows,
                   std::int64_t row_floats, float* dst, std::int64_t dst_stride) override {
    cpu::gather_rows(src, src_stride, indices, rows, row_floats, dst, dst_stride);
  }

  void adam(float* params, const float* grads, float* m, float* v, std::int64_t n, const AdamHyper& hyper) override {
    cpu::adam(params, grads, m, v, n, hyper);
  }

 private:
  MatmulPrecision precision_;
};

}  // namespace

MatmulPrecision parse_matmul_precision(const std::string& name) {
  if (name == "fp32") return MatmulPrecision::fp32;
  if (name == "bf16") return MatmulPrecision::bf16;
  throw Error("unknown precision '" + name + "' (expected fp32 or bf16)");
}

std::string to_string(MatmulPrecision precision) { return precision == MatmulPrecision::fp32 ? "fp32" : "bf16"; }

Backend& cpu_backend(MatmulPrecision precision) {
  static CpuBackend fp32(MatmulPrecision::fp32);
  if (precision == MatmulPrecision::fp32) return fp32;
  if (!cpu::bf16_matmul_supported())
    throw Error("precision bf16 needs a CPU with AVX512-BF16, which this one lacks; use fp32");
  static CpuBackend bf16(MatmulPrecision::bf16);
  return bf16;
}

}  // namespace attn
