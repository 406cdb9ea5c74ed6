#pragma once
// The CPU implementations of the kernel interface, one small file per operation.
#include "kernels/backend.h"

namespace attn::cpu {

// The product of Backend::matmul, dispatched on the operands' types (matmul.cpp); precision is
// what a single f32 × f32 product computes in.
void matmul(MatmulPrecision precision, int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b,
            float beta, float* c, int ldc, const GemmBatch* batch);

void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
          float beta, float* c, int ldc);
// bf16 inputs, float32 accumulation and output (gemm_bf16.cpp), A and B each f32 or bf16 (bf16
// read in place, f32 operands converted); needs bf16_matmul_supported(). Products with m, n or k
// below kMinBf16Dim are computed in float32.
extern const int kMinBf16Dim;
bool bf16_matmul_supported();
void gemm_mixed(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                int ldc);
// C = A·B + bias (then ReLU) in one bf16 product with the bias folded into its stores (C float,
// ldc n; or, given rounded, the result rounded to bf16 there instead, C untouched): the same bits
// as gemm_mixed then add_bias (bias null: no bias, no ReLU; to_bf16's bits). Returns false, doing nothing, where the
// product does not run as one (small or cut shapes): the caller then runs the two steps.
bool gemm_mixed_bias(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, const float* bias, bool relu,
                     float* c, Bf16* rounded);
// matmul (alpha 1, beta 0, ldc n) then add_bias / add_bias_relu, or to_bf16 alone without a bias
// (Backend::matmul_bias).
void matmul_bias(MatmulPrecision precision, int m, int n, int k, const MatrixRef& a, const MatrixRef& b,
                 const float* bias, bool relu, float* c, Bf16* rounded);
void to_bf16(const float* x, std::int64_t n, Bf16* y);  // round to nearest even
void gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                  int ldb, float beta, float* c, int ldc, const GemmBatch& batch);
// The same in bf16 (attention under precision bf16): A and B, each f32 or bf16, rounded to bf16,
// products summed in float32. Blocks with a side over kMaxSmallGemm, or a build without
// AVX512-BF16, compute in float32 from the operands' exact values instead.
void gemm_batched_mixed(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                        int ldc, const GemmBatch& batch);
// Either (A and B f32 or bf16, exact values) for products with m, n and k all at most
// kMaxSmallGemm (small_gemm_batched.cpp); says whether it ran (it needs AVX-512).
constexpr int kMaxSmallGemm = 256;
bool small_gemm_batched(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                        int ldc, const GemmBatch& batch);
// The same in bf16 arithmetic (small_gemm_batched_bf16.cpp): every operand rounded to bf16. Says
// whether it ran (it needs AVX512-BF16).
bool small_gemm_batched_bf16(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta,
                             float* c, int ldc, const GemmBatch& batch);

// y = x·Wᵀ (times alpha, plus beta·C) for float activations x [m, k] and an s8 weight W [n, k]
// (gemm_s8.cpp): each row of x quantized to 8 bits (7 without VNNI) with its own scale and zero point, oneDNN's
// u8·s8 → s32 product, then scaled back.
void gemm_s8(int m, int n, int k, float alpha, const float* x, std::int64_t ldx, const MatrixRef& w, float beta,
             float* c, int ldc);
// Backend::quantize_rows (quantize.cpp).
void quantize_rows(const float* x, std::int64_t rows, int cols, std::int64_t ld, std::int8_t* q, float* scales,
                   std::int32_t* sums);

// Backend::attention and attention_backward, fused per (sentence, head) block (attention.cpp);
// precision as matmul's.
void attention(MatmulPrecision precision, const AttentionBlocks& a, const AttentionMask& mask, float* probs, float* ctx,
               Bf16* ctx_rounded);
void attention_backward(MatmulPrecision precision, const AttentionBlocks& a, const float* probs, const float* dctx,
                        float* dscores, float* dq, float* dk, float* dv, const RoundedAttentionGradients* rounded);

void copy(void* dst, const void* src, std::size_t bytes);
inline void copy_to_device(void* dst, const void* host_src, std::size_t bytes) { copy(dst, host_src, bytes); }
inline void copy_to_host(void* host_dst, const void* src, std::size_t bytes) { copy(host_dst, src, bytes); }
void fill(float* x, std::int64_t n, float value);
void add(const float* a, const float* b, float* y, std::int64_t n);
void accumulate(const float* x, float* y, std::int64_t n);
void scale(float* x, std::int64_t n, float s);
void add_bias(float* x, const float* bias, std::int64_t rows, int cols, Bf16* y);
void add_bias_relu(float* x, const float* bias, std::int64_t rows, int cols, Bf16* y);
void relu_backward(float* dy, const void* y, DType y_dtype, std::int64_t n);
void bias_grad(const float* dy, std::int64_t rows, int cols, float* dbias, void* dy_copy, DType copy_dtype,
               const void* relu, DType relu_type);
double sum_squares(const float* x, std::int64_t n);

void dropout(const float* x, float* y, std::int64_t n, float p, std::uint64_t seed);

void layernorm(const float* x, const float* residual, const float* gamma, const float* beta, float* sum, float* y,
               Bf16* rounded, float* mean, float* rstd, std::int64_t rows, int cols, float eps);
void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma,
                        float* dx, const SublayerGradient& sublayer, float* dgamma, float* dbeta, std::int64_t rows,
                        int cols);

void cached_attention(const CachedAttention& a, float* probs, float* ctx);
// Steps of attention and attention_backward (not Backend operations): scores [batch, heads, tq, tk]
// scaled, masked and turned into probabilities in place (masked entries exactly 0); dprobs turned
// into dL/dscores (the scale included) given the probabilities.
void attention_softmax(float* scores, int batch, int heads, int tq, int tk, const AttentionMask& mask, float scale);
void attention_softmax_backward(float* dprobs, const float* probs, std::int64_t rows, int tk, float scale);

void embedding(const std::int32_t* ids, std::int64_t n, const MatrixRef& table, int dim, float scale,
               const float* positions, int seq_len, float* out);
void embedding_backward(const std::int32_t* ids, std::int64_t n, const float* dout, int dim, float scale,
                        float* dtable);
void positions_backward(const float* dout, int batch, int seq_len, int dim, float* dpositions);

LossSums cross_entropy(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab, float smoothing,
                       int ignore_id, float grad_scale, float* row_nll, void* grad, DType grad_dtype);
void log_softmax(float* x, std::int64_t rows, int cols);
void topk(const float* x, std::int64_t rows, int cols, int k, float* values, std::int32_t* indices);
void gather_rows(const float* src, std::int64_t src_stride, const std::int32_t* indices, std::int64_t rows,
                 std::int64_t row_floats, float* dst, std::int64_t dst_stride);
void gather_weight_rows(const MatrixRef& src, const std::int32_t* indices, std::int64_t rows, std::int64_t cols,
                        void* dst, float* dst_scales, std::int32_t* dst_row_sums);

void adam(float* params, float* grads, float* m, float* v, std::int64_t n, const AdamHyper& hyper, Bf16* rounded);
void moving_average(float* average, const float* x, std::int64_t n, float decay);

// Splits [0, n) into the same fixed chunks whatever the thread count, so that reductions give
// bit-identical results on any number of threads.
inline constexpr int kReductionChunks = 64;

// Per-chunk column sums (`chunks` rows of `cols` floats, `stride` floats apart) added into the first
// in chunk order, then that into out: the order bias_grad's row chunks are summed in, which
// layernorm_backward keeps for a sublayer's bias gradient (the first row is overwritten).
inline void add_chunk_sums(float* partials, std::int64_t stride, int chunks, int cols, float* out) {
  for (int ch = 1; ch < chunks; ++ch) {
    const float* p = partials + ch * stride;
#pragma omp simd
    for (int c = 0; c < cols; ++c) partials[c] += p[c];
  }
#pragma omp simd
  for (int c = 0; c < cols; ++c) out[c] += partials[c];
}

}  // namespace attn::cpu
