// Attention over whole sentences, forward and backward (Backend::attention, attention_backward),
// fused per (sentence, head) block: each thread takes whole blocks and runs a block's products,
// softmax and products again in turn, so that the block's scores, probabilities and gradients
// (32 × 32 floats at the cpu-hour preset: 4 KB) stay in L1 between them, and one parallel region
// does what took three to five (each waking the threads, each reading the scores from memory).
// The products are small_gemm_batched*.cpp's block products and the softmax rows
// attention_softmax's: the same operations in the same order, so the results are the same bits as
// the batched path's, which blocks over kMaxSmallGemm (or a build without AVX-512) still take.
#include <algorithm>
#include <cmath>
#include <array>
#include <vector>

#include "kernels/cpu/avx512_blocks.h"
#include "kernels/cpu/bf16_conversion.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/small_product.h"
#include "kernels/cpu/softmax_rows.h"

namespace attn::cpu {
namespace {

float score_scale(const AttentionBlocks& a) { return 1.0f / std::sqrt(static_cast<float>(a.d_k)); }

bool fused(const AttentionBlocks& a) {
  return kHasSmallProductF32 && a.queries <= kMaxSmallGemm && a.keys <= kMaxSmallGemm && a.d_k <= kMaxSmallGemm &&
         a.d_v <= kMaxSmallGemm;
}

// One block product as matmul computes it for these operand types (ops.h: gemm_batched_mixed in
// bf16, where AVX512-BF16 is missing in float32 from the exact values).
struct BlockProducts {
  MatmulPrecision precision;
  SmallProductScratch& scratch;
  // Whether a product of operands of these types runs in bf16 arithmetic (its inputs rounded).
  bool in_bf16(DType a, DType b) const {
    return kHasSmallProductBf16 && (precision == MatmulPrecision::bf16 || a == DType::bf16 || b == DType::bf16);
  }
  void operator()(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, float* c, int ldc) const {
    if (in_bf16(a.dtype, b.dtype)) return small_product_bf16(m, n, k, 1.0f, a, b, 0.0f, c, ldc, scratch);
    small_product_f32(m, n, k, 1.0f, a, b, 0.0f, c, ldc, scratch);
  }
};

// One (sentence, head) block: its sentence, head, index b·heads + h, and its heads of q, k and v.
struct Block {
  int b, h, i;
  MatrixRef q, k, v;
};

// The rows of a block's head of x (rows × cols of x's type).
[[gnu::always_inline]] inline void prefetch_head(const MatrixRef& x, int rows, int cols) {
  const auto bytes = static_cast<std::int64_t>(element_bytes(x.dtype));
  prefetch_rows(x.data, rows, x.ld * bytes, cols * bytes, false);
}

// f(block, product, next) for every block, whole blocks per thread, in one parallel region; next
// is the block after it (the same as block for the last), whose operands f asks for (prefetch)
// a part at a time between its products.
template <typename F>
void for_each_block(MatmulPrecision precision, const AttentionBlocks& a, F&& f) {
  const int count = a.batch * a.heads;
  const auto block = [&](int i) {
    const int b = i / a.heads, h = i % a.heads;
    return Block{b,
                 h,
                 i,
                 advanced(a.q, b * a.q_stride + h * a.d_k),
                 advanced(a.k, b * a.k_stride + h * a.d_k),
                 advanced(a.v, b * a.v_stride + h * a.d_v)};
  };
#pragma omp parallel
  {
    thread_local SmallProductScratch scratch;
    const BlockProducts product{precision, scratch};
#pragma omp for schedule(static)
    for (int i = 0; i < count; ++i) {
      f(block(i), product, block(std::min(i + 1, count - 1)));
    }
  }
}

// A float block (rows × cols, packed) as a product's operand: itself, or where the products it
// feeds round their inputs to bf16 anyway, rounded once into `rounded` (the same bits as each
// product's own rounding: round to nearest even), so that two products share one rounding and a
// row-major operand is read in place.
MatrixRef operand(const float* x, int rows, int cols, bool in_bf16, std::vector<Bf16>& rounded) {
  if (!in_bf16) return f32_matrix(x, cols);
  rounded.resize(static_cast<std::size_t>(rows) * cols);
  round_to_bf16(x, static_cast<std::int64_t>(rows) * cols, rounded.data());
  return bf16_matrix(rounded.data(), cols);
}

MatrixRef transposed(MatrixRef x) {
  x.trans = Trans::Yes;
  return x;
}

// One block's gradient (rows × cols, rows ld apart) rounded to bf16 into out (rows ld_out apart),
// and its column sums (0 + row 0 + row 1 + ...) into sums where given. Up to sixty-four columns at
// a time with their sums in registers down the rows (a sum kept in memory waited every row on its
// own store), the columns left (under sixteen) row by row; rounded as round_to_bf16 rounds (whole
// sixteens with the instruction, the rest one by one).
void round_and_sum(const float* x, int rows, int cols, std::int64_t ld, Bf16* out, std::int64_t ld_out, float* sums) {
  if (sums) std::fill(sums, sums + cols, 0.0f);
  int c0 = 0;
#if defined(__AVX512BF16__)
  while (cols - c0 >= 16) {
    const int vectors = std::min(4, (cols - c0) / 16);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int r = 0; r < rows; ++r) {
      const float* row = x + r * ld + c0;
      Bf16* o = out + r * ld_out + c0;
      avx512::unrolled<4>([&](auto i) {
        if (i >= vectors) return;
        const __m512 v = _mm512_loadu_ps(row + 16 * i);
        acc[i] = _mm512_add_ps(acc[i], v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 16 * i), (__m256i)_mm512_cvtneps_pbh(v));
      });
    }
    if (sums)
      for (int i = 0; i < vectors; ++i) _mm512_storeu_ps(sums + c0 + 16 * i, acc[i]);
    c0 += 16 * vectors;
  }
  if (c0 == cols) return;
#endif
  x += c0, out += c0, cols -= c0;
  if (sums) sums += c0;
  for (int r = 0; r < rows; ++r) {
    const float* row = x + r * ld;
    if (sums) {
#pragma omp simd
      for (int c = 0; c < cols; ++c) sums[c] += row[c];
    }
    round_to_bf16(row, cols, out + r * ld_out);
  }
}

// One of attention_backward's gradients (∂q, ∂k or ∂v): where a block's product writes it, and,
// with RoundedAttentionGradients, how the block is finished: rounded into its bf16 place and its
// rows summed per (sentence, head) into `partial`, which add_bias() adds over the sentences in order.
struct GradientOut {
  float* f32;                  // laid out like q, k or v
  Bf16* bf16;                  // its bf16 place (rounded), else null
  float* bias;                 // the bias gradient to add to (rounded), else null
  std::int64_t stride, ld;     // a sentence's rows apart; rows apart
  int rows, cols, heads;       // a block's rows and its head's columns
  std::vector<float> partial;  // [sentence][heads · cols], where bias is given

  std::int64_t at(const Block& x) const { return x.b * stride + x.h * cols; }
  // The product's output (c, ldc): in place, or (rounded) the thread's scratch.
  std::pair<float*, int> target(const Block& x, float* scratch) const {
    if (!bf16) return {f32 + at(x), static_cast<int>(ld)};
    return {scratch, cols};
  }
  void prefetch(const Block& x) const {
    if (bf16)
      prefetch_rows(bf16 + at(x), rows, ld * 2, cols * 2, true);
    else
      prefetch_rows(f32 + at(x), rows, ld * 4, cols * 4, true);
  }
  // The block's product, written at target(x) = (c, ldc), finished where rounded.
  void finish(const Block& x, const float* c, int ldc) {
    if (!bf16) return;
    round_and_sum(c, rows, cols, ldc, bf16 + at(x), ld,
                  partial.empty() ? nullptr : partial.data() + (static_cast<std::int64_t>(x.b) * heads + x.h) * cols);
  }
  void add_bias(int batch) const {
    if (partial.empty()) return;
    const int width = heads * cols;
    for (int c = 0; c < width; ++c) {
      float sum = partial[c];
      for (int b = 1; b < batch; ++b) sum += partial[static_cast<std::size_t>(b) * width + c];
      bias[c] += sum;
    }
  }
};

// ∂q, ∂k and ∂v as GradientOut, in that order.
std::array<GradientOut, 3> gradient_outs(const AttentionBlocks& a, float* dq, float* dk, float* dv,
                                         const RoundedAttentionGradients* r) {
  const auto make = [&](float* f32, Bf16* bf16, float* bias, std::int64_t stride, std::int64_t ld, int rows, int cols) {
    if (!r) bf16 = nullptr, bias = nullptr;
    const std::size_t partial = bias ? static_cast<std::size_t>(a.batch) * a.heads * cols : 0;
    return GradientOut{f32, bf16, bias, stride, ld, rows, cols, a.heads, std::vector<float>(partial)};
  };
  return {make(dq, r ? r->dq : nullptr, r ? r->dq_bias : nullptr, a.q_stride, a.q.ld, a.queries, a.d_k),
          make(dk, r ? r->dk : nullptr, r ? r->dk_bias : nullptr, a.k_stride, a.k.ld, a.keys, a.d_k),
          make(dv, r ? r->dv : nullptr, r ? r->dv_bias : nullptr, a.v_stride, a.v.ld, a.keys, a.d_v)};
}

// ∂ctx from element `at` on as attention's products read it: in bf16 where it comes so (read as
// they would round it: half the bytes and no rounding per product), else in float.
MatrixRef context_gradient(const float* dctx, const RoundedAttentionGradients* rounded, int ld_ctx, std::int64_t at) {
  return rounded && rounded->dctx ? bf16_matrix(rounded->dctx + at, ld_ctx) : f32_matrix(dctx + at, ld_ctx);
}

// The batched route: attention as it was before the fused kernel, and for blocks too large for it.
void batched_forward(MatmulPrecision precision, const AttentionBlocks& a, const AttentionMask& mask, float* probs,
                     float* ctx, Bf16* ctx_rounded) {
  const std::int64_t block = static_cast<std::int64_t>(a.queries) * a.keys;
  const int ld_ctx = a.heads * a.d_v;
  const GemmBatch scores{a.batch, a.heads, a.q_stride, a.d_k, a.k_stride, a.d_k, a.heads * block, block};
  matmul(precision, a.queries, a.keys, a.d_k, 1.0f, a.q, transposed(a.k), 0.0f, probs, a.keys, &scores);
  attention_softmax(probs, a.batch, a.heads, a.queries, a.keys, mask, score_scale(a));
  const GemmBatch context{
      a.batch, a.heads, a.heads * block, block, a.v_stride, a.d_v, static_cast<std::int64_t>(a.queries) * ld_ctx,
      a.d_v};
  matmul(precision, a.queries, a.d_v, a.keys, 1.0f, f32_matrix(probs, a.keys), a.v, 0.0f, ctx, ld_ctx, &context);
  if (ctx_rounded) to_bf16(ctx, static_cast<std::int64_t>(a.batch) * a.queries * ld_ctx, ctx_rounded);
}

void batched_backward(MatmulPrecision precision, const AttentionBlocks& a, const float* probs, const float* dctx,
                      float* dprobs, float* dq, float* dk, float* dv, const RoundedAttentionGradients* rounded) {
  const std::int64_t block = static_cast<std::int64_t>(a.queries) * a.keys;
  const int ld_ctx = a.heads * a.d_v;
  const std::int64_t ctx_stride = static_cast<std::int64_t>(a.queries) * ld_ctx;
  const GemmBatch probs_by_head{a.batch, a.heads, a.heads * block, block, 0, 0, 0, 0};
  const auto f32 = [](const float* x, std::int64_t ld, Trans t = Trans::No) { return f32_matrix(x, ld, t); };
  const MatrixRef d_ctx = context_gradient(dctx, rounded, ld_ctx, 0);
  // dV_bh = P_bhᵀ · dctx_bh
  GemmBatch b = probs_by_head;
  b.b_outer = ctx_stride, b.b_inner = a.d_v, b.c_outer = a.v_stride, b.c_inner = a.d_v;
  matmul(precision, a.keys, a.d_v, a.queries, 1.0f, f32(probs, a.keys, Trans::Yes), d_ctx, 0.0f, dv,
         static_cast<int>(a.v.ld), &b);
  // dP_bh = dctx_bh · V_bhᵀ
  b = GemmBatch{a.batch, a.heads, ctx_stride, a.d_v, a.v_stride, a.d_v, a.heads * block, block};
  matmul(precision, a.queries, a.keys, a.d_v, 1.0f, d_ctx, transposed(a.v), 0.0f, dprobs, a.keys, &b);
  // dS = P ⊙ (dP - rowsum(dP ⊙ P)) / √d_k
  attention_softmax_backward(dprobs, probs, a.probs_size() / a.keys, a.keys, score_scale(a));
  // dQ_bh = dS_bh · K_bh ; dK_bh = dS_bhᵀ · Q_bh
  b = probs_by_head;
  b.b_outer = a.k_stride, b.b_inner = a.d_k, b.c_outer = a.q_stride, b.c_inner = a.d_k;
  matmul(precision, a.queries, a.d_k, a.keys, 1.0f, f32(dprobs, a.keys), a.k, 0.0f, dq, static_cast<int>(a.q.ld), &b);
  b = probs_by_head;
  b.b_outer = a.q_stride, b.b_inner = a.d_k, b.c_outer = a.k_stride, b.c_inner = a.d_k;
  matmul(precision, a.keys, a.d_k, a.queries, 1.0f, f32(dprobs, a.keys, Trans::Yes), a.q, 0.0f, dk,
         static_cast<int>(a.k.ld), &b);
  if (!rounded) return;
  // Each block rounded and summed as the fused route does it (the same bits).
  std::array<GradientOut, 3> out = gradient_outs(a, dq, dk, dv, rounded);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < a.batch * a.heads; ++i) {
    const Block x{i / a.heads, i % a.heads, i, {}, {}, {}};
    for (GradientOut& g : out) g.finish(x, g.f32 + g.at(x), static_cast<int>(g.ld));
  }
  for (const GradientOut& g : out) g.add_bias(a.batch);
}

}  // namespace

void attention(MatmulPrecision precision, const AttentionBlocks& a, const AttentionMask& mask, float* probs, float* ctx,
               Bf16* ctx_rounded) {
  if (a.batch == 0 || a.heads == 0 || a.queries == 0) return;
  if (!fused(a)) return batched_forward(precision, a, mask, probs, ctx, ctx_rounded);
  const std::int64_t block = static_cast<std::int64_t>(a.queries) * a.keys;
  const int ld_ctx = a.heads * a.d_v;
  const float scale = score_scale(a);
  const auto ctx_offset = [&](const Block& x) {
    return static_cast<std::int64_t>(x.b) * a.queries * ld_ctx + x.h * a.d_v;
  };
  for_each_block(precision, a, [&](const Block& x, const BlockProducts& product, const Block& next) {
    prefetch_head(next.q, a.queries, a.d_k);
    prefetch_head(next.k, a.keys, a.d_k);
    float* p = probs + x.i * block;
    product(a.queries, a.keys, a.d_k, x.q, transposed(x.k), p, a.keys);  // S = Q·Kᵀ
    softmax_rows(
        p, a.queries, a.keys, [&](int r) { return query_keys(mask, x.b, r, a.keys); }, scale);
    prefetch_head(next.v, a.keys, a.d_v);
    prefetch_rows(probs + next.i * block, 1, 0, block * 4, true);
    if (ctx_rounded)
      prefetch_rows(ctx_rounded + ctx_offset(next), a.queries, ld_ctx * 2, a.d_v * 2, true);
    else
      prefetch_rows(ctx + ctx_offset(next), a.queries, ld_ctx * 4, a.d_v * 4, true);
    thread_local std::vector<Bf16> p16;
    const MatrixRef p_operand = operand(p, a.queries, a.keys, product.in_bf16(DType::f32, a.v.dtype), p16);
    if (!ctx_rounded) return product(a.queries, a.d_v, a.keys, p_operand, x.v, ctx + ctx_offset(x), ld_ctx);  // P·V
    // Rounded: the block's context in the thread's own scratch (in L1), then its rows in bf16
    // straight into place: the float context never goes to memory.
    thread_local std::vector<float> ctx_block;
    ctx_block.resize(static_cast<std::size_t>(a.queries) * a.d_v);
    product(a.queries, a.d_v, a.keys, p_operand, x.v, ctx_block.data(), a.d_v);
    // Row by row on this thread (convert_to_bf16's parallel loop, not taken at this size, still
    // started a team of one for every block: an allocation each time).
    for (int r = 0; r < a.queries; ++r)
      round_to_bf16(ctx_block.data() + r * a.d_v, a.d_v, ctx_rounded + ctx_offset(x) + r * ld_ctx);
  });
}

void attention_backward(MatmulPrecision precision, const AttentionBlocks& a, const float* probs, const float* dctx,
                        float* dscores, float* dq, float* dk, float* dv, const RoundedAttentionGradients* rounded) {
  if (a.batch == 0 || a.heads == 0) return;
  if (!fused(a)) return batched_backward(precision, a, probs, dctx, dscores, dq, dk, dv, rounded);
  const std::int64_t block = static_cast<std::int64_t>(a.queries) * a.keys;
  const int ld_ctx = a.heads * a.d_v;
  const float scale = score_scale(a);
  const auto dctx_at = [&](const Block& x) {
    return context_gradient(dctx, rounded, ld_ctx, static_cast<std::int64_t>(x.b) * a.queries * ld_ctx + x.h * a.d_v);
  };
  // Where a block's gradients go: in place in float, or (rounded) first into the thread's own
  // scratch (in L1), then rounded into place with their rows summed: the float gradients never go
  // to memory. Prefetched for writing likewise.
  std::array<GradientOut, 3> out = gradient_outs(a, dq, dk, dv, rounded);
  GradientOut &gq = out[0], &gk = out[1], &gv = out[2];
  for_each_block(precision, a, [&](const Block& x, const BlockProducts& product, const Block& next) {
    prefetch_rows(probs + next.i * block, 1, 0, block * 4, false);
    prefetch_head(dctx_at(next), a.queries, a.d_v);
    const float* p = probs + x.i * block;
    // dS in the thread's own scratch (in L1 from block to block), not in dscores: the batched
    // route's scratch would be one more buffer of probs' size through memory.
    thread_local std::vector<float> ds_block, d_block;
    ds_block.resize(static_cast<std::size_t>(block));
    float* ds = ds_block.data();
    if (rounded) d_block.resize(static_cast<std::size_t>(std::max(a.queries, a.keys)) * std::max(a.d_k, a.d_v));
    const MatrixRef d_ctx = dctx_at(x);
    const auto [dv_out, dv_ld] = gv.target(x, d_block.data());
    product(a.keys, a.d_v, a.queries, f32_matrix(p, a.keys, Trans::Yes), d_ctx, dv_out, dv_ld);  // dV = Pᵀ·dctx
    gv.finish(x, dv_out, dv_ld);
    prefetch_head(next.v, a.keys, a.d_v);
    gv.prefetch(next);
    product(a.queries, a.keys, a.d_v, d_ctx, transposed(x.v), ds, a.keys);  // dP = dctx·Vᵀ
    softmax_backward_rows(ds, p, a.queries, a.keys, scale);
    // dS feeds two products: rounded once where they round it.
    thread_local std::vector<Bf16> ds16;
    const MatrixRef ds_operand = operand(
        ds, a.queries, a.keys, product.in_bf16(DType::f32, a.k.dtype) && product.in_bf16(DType::f32, a.q.dtype), ds16);
    prefetch_head(next.k, a.keys, a.d_k);
    gq.prefetch(next);
    const auto [dq_out, dq_ld] = gq.target(x, d_block.data());
    product(a.queries, a.d_k, a.keys, ds_operand, x.k, dq_out, dq_ld);  // dQ = dS·K
    gq.finish(x, dq_out, dq_ld);
    prefetch_head(next.q, a.queries, a.d_k);
    gk.prefetch(next);
    const auto [dk_out, dk_ld] = gk.target(x, d_block.data());
    product(a.keys, a.d_k, a.queries, transposed(ds_operand), x.q, dk_out, dk_ld);  // dK = dSᵀ·Q
    gk.finish(x, dk_out, dk_ld);
  });
  for (const GradientOut& g : out) g.add_bias(a.batch);
}

}  // namespace attn::cpu
