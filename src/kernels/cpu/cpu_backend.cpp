// The CPU backend: forwards the kernel interface to the functions in kernels/cpu/.
#include <cstdlib>
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
  bool keeps_bf16_activations() const override { return precision_ == MatmulPrecision::bf16; }
  void matmul(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c, int ldc,
              const GemmBatch* batch) override {
    cpu::matmul(precision_, m, n, k, alpha, a, b, beta, c, ldc, batch);
  }
  void matmul_bias(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, const float* bias, bool relu, float* c,
                   Bf16* rounded) override {
    cpu::matmul_bias(precision_, m, n, k, a, b, bias, relu, c, rounded);
  }
  void attention(const AttentionBlocks& a, const AttentionMask& mask, float* probs, float* ctx,
                 Bf16* ctx_rounded) override {
    cpu::attention(precision_, a, mask, probs, ctx, ctx_rounded);
  }
  void attention_backward(const AttentionBlocks& a, const float* probs, const float* dctx, float* dscores, float* dq,
                          float* dk, float* dv, const RoundedAttentionGradients* rounded) override {
    cpu::attention_backward(precision_, a, probs, dctx, dscores, dq, dk, dv, rounded);
  }

#define ATTN_CPU_BACKEND_OP(ret, name, params, args) \
  ret name params override { return cpu::name args; }
  ATTN_BACKEND_OPS(ATTN_CPU_BACKEND_OP)
#undef ATTN_CPU_BACKEND_OP

 private:
  MatmulPrecision precision_;
};

}  // namespace

MatmulPrecision parse_matmul_precision(const std::string& name) {
  if (name == "fp32") return MatmulPrecision::fp32;
  if (name == "bf16") return MatmulPrecision::bf16;
  throw Error("unknown precision '" + name + "' (expected fp32 or bf16)");
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::s8:
      return "s8";
  }
  return "?";
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
