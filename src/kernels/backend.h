#pragma once
// The kernel interface: every numeric operation the layers need, on memory the backend owns.
// Layers call only this interface, so a CUDA backend can replace the CPU one without touching
// anything above this floor. Pointers are device pointers; shapes are row-major.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn {

enum class Trans : bool { No = false, Yes = true };

// A bfloat16 number's bits (the top half of a float's).
using Bf16 = std::uint16_t;

// What a matrix operand's elements are.
//   f32:  float.
//   bf16: bfloat16 (Bf16); a product with a bf16 operand rounds its float operands to bf16 and
//         sums in float32, as PyTorch's autocast does.
//   s8:   signed 8-bit integers with one float scale per stored row: element (r, c) is
//         scales[r] · data[r, c] (a Linear's weight [out, in], one scale per output row; see
//         quantize_rows). row_sums[r] = Σ_c data[r, c]: the product needs it to take the
//         activations' zero points back out.
enum class DType : std::uint8_t { f32, bf16, s8 };
const char* to_string(DType dtype);
// Bytes per element of the type.
inline std::size_t element_bytes(DType dtype) {
  return dtype == DType::f32 ? sizeof(float) : dtype == DType::bf16 ? sizeof(Bf16) : sizeof(std::int8_t);
}

// An operand of a matrix product: row-major storage with leading dimension ld, read transposed
// when trans is Yes. (Device pointers.)
struct MatrixRef {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t ld = 0;
  Trans trans = Trans::No;
  const float* scales = nullptr;           // s8 only: [stored rows]
  const std::int32_t* row_sums = nullptr;  // s8 only: [stored rows]
  // f32 only, optional: the same values rounded to bf16 (to nearest even, as to_bf16 rounds), laid
  // out alike (ld the same). A product that rounds its float inputs reads these instead of rounding
  // again (a weight read by several products between two updates); every other ignores them.
  const Bf16* rounded = nullptr;
};
inline MatrixRef f32_matrix(const float* data, std::int64_t ld, Trans trans = Trans::No) {
  return {data, DType::f32, ld, trans};
}
inline MatrixRef bf16_matrix(const Bf16* data, std::int64_t ld, Trans trans = Trans::No) {
  return {data, DType::bf16, ld, trans};
}
inline MatrixRef s8_matrix(const std::int8_t* data, const float* scales, const std::int32_t* row_sums, std::int64_t ld,
                           Trans trans = Trans::No) {
  return {data, DType::s8, ld, trans, scales, row_sums};
}

// Strides of a two-level batch of matrices (e.g. sentence × head in attention):
// matrix (o, i) of A starts at a + o * a_outer + i * a_inner, likewise for B and C.
struct GemmBatch {
  int outer = 1, inner = 1;
  std::int64_t a_outer = 0, a_inner = 0;
  std::int64_t b_outer = 0, b_inner = 0;
  std::int64_t c_outer = 0, c_inner = 0;
};

// Which keys a query may attend to. Keys at or beyond the sentence's length are padding.
struct AttentionMask {
  const std::int32_t* key_lengths = nullptr;  // [batch], device memory; null: all keys valid
  bool causal = false;                        // query q sees keys k <= q + query_offset
  int query_offset = 0;                       // position of the first query (incremental decoding)
  int window = 0;                             // > 0: restricted attention, |q + offset - k| <= window
};

// Scaled dot-product attention over whole sentences (training, forced decoding): for sentence b
// and head h, P_bh = softmax(Q_bh·K_bhᵀ/√d_k) under the mask and ctx_bh = P_bh·V_bh. Row t of
// sentence b's queries starts at q's element b·q_stride + t·q.ld, head h of it h·d_k further;
// keys likewise (k_stride, h·d_k), values (v_stride, h·d_v). q, k and v are f32 or bf16, not
// transposed; every product computes as matmul's rule says for its operands' types (a backend of
// precision bf16: inputs rounded to bf16, float32 sums).
struct AttentionBlocks {
  int batch = 0, heads = 0, d_k = 0, d_v = 0;
  int queries = 0, keys = 0;  // per sentence
  MatrixRef q, k, v;
  std::int64_t q_stride = 0, k_stride = 0, v_stride = 0;
  std::int64_t probs_size() const { return static_cast<std::int64_t>(batch) * heads * queries * keys; }
};

// Attention's gradients as the products after it read them where the backend keeps bf16
// activations: ∂q, ∂k and ∂v rounded to bf16 (as to_bf16 rounds), laid out like q, k and v, and the
// q, k and v projections' bias gradients, each added the sum of its gradient's rows (each
// sentence's rows summed in order, the sentences' sums then in order; null: not summed). And the
// gradient coming in, ∂ctx, where the output projection's product gave it in bf16 (as to_bf16 rounds
// it: what attention's products round it to where the backend keeps bf16 activations), read in place
// of the float dctx, which may then be null.
struct RoundedAttentionGradients {
  Bf16 *dq = nullptr, *dk = nullptr, *dv = nullptr;
  float *dq_bias = nullptr, *dk_bias = nullptr, *dv_bias = nullptr;
  const Bf16* dctx = nullptr;
};

// The gradient a sublayer reads from its post-LN connection, written on layernorm_backward's pass:
// s = dropout(dx) with the mask the forward pass applied (dropout's rule for p and seed; p = 0: s is
// dx), as float into f32 and rounded to bf16 into bf16 (as to_bf16 rounds) where those are not
// null, and where bias_grad is not null its rows summed into bias_grad as bias_grad sums them (the
// sublayer's output Linear's bias; bias_grad's pass over s, made here instead).
struct SublayerGradient {
  float* f32 = nullptr;
  Bf16* bf16 = nullptr;
  float* bias_grad = nullptr;
  float dropout = 0;
  std::uint64_t seed = 0;
};

// Attention of one new query per row over keys and values cached position by position
// (incremental decoding), read through a table of which cached row holds each position, so that
// beam search reorders hypotheses by rewriting the table instead of copying the cache.
// Row r's query for head h: q + r·ld_q + h·d_k. Position p of row r lives in cached row
// c = rows_of[r·rows_of_stride + p] (rows_of_stride 0: the one row rows_of[r] holds all of them):
// its key at cache + c·row_stride + p·ld_cache + h·d_k, its value at the same place + heads·d_k +
// h·d_v - h·d_k. Row r sees positions [lo, hi): hi = keys, or key_lengths of the cached row of its
// position 0 (rows_of[r·rows_of_stride], or rows_of[r] with stride 0) when key_lengths is given;
// with window > 0, lo = max(0, query_position - window) and hi = min(hi, query_position + window + 1)
// (else lo = 0).
struct CachedAttention {
  int rows = 0, heads = 0, d_k = 0, d_v = 0;
  const float* q = nullptr;
  int ld_q = 0;
  const float* cache = nullptr;
  std::int64_t row_stride = 0;
  int ld_cache = 0;
  const std::int32_t* rows_of = nullptr;  // device memory
  std::int64_t rows_of_stride = 0;
  int keys = 0;                               // positions per row: probs' row length
  const std::int32_t* key_lengths = nullptr;  // per cached row, device memory; null: all keys
  int query_position = 0, window = 0;         // restricted self-attention
};

// Sums over the non-ignored targets of a batch, returned to the host.
struct LossSums {
  double loss = 0;          // label-smoothed cross-entropy
  double nll = 0;           // plain negative log-likelihood of the targets
  std::int64_t tokens = 0;  // targets that were not ignored
  LossSums& operator+=(const LossSums& o) {
    loss += o.loss, nll += o.nll, tokens += o.tokens;
    return *this;
  }
};

struct AdamHyper {
  float lr = 0, beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  float grad_scale = 1;   // gradients are multiplied by this first (e.g. clipping)
  std::int64_t step = 1;  // 1-based, for bias correction
};

// Every operation but the matrix product, attention (whose products compute as the matrix product
// does) and memory management, as
//   OP(return type, name, (parameters), (arguments))
// Backend declares them, and the CPU backend (forwarding to kernels/cpu/ops.h's function of the
// same name) and the profiling wrapper follow from this one list: an operation is added here,
// in ops.h and in its own file in cpu/, nowhere else.
#define ATTN_BACKEND_OPS(OP)                                                                                         \
  /* Memory contents. */                                                                                             \
  OP(void, copy_to_device, (void* dst, const void* host_src, std::size_t bytes), (dst, host_src, bytes))             \
  OP(void, copy_to_host, (void* host_dst, const void* src, std::size_t bytes), (host_dst, src, bytes))               \
  OP(void, copy, (void* dst, const void* src, std::size_t bytes), (dst, src, bytes))                                 \
  OP(void, fill, (float* x, std::int64_t n, float value), (x, n, value))                                             \
  /* Conversions. to_bf16 rounds to nearest even; subnormal inputs become ±0 (as AVX512-BF16 */                     \
  /* converts them), NaNs stay NaNs. quantize_rows: per row r of x [rows, cols] */                                   \
  /* (row stride ld), scale = max|x[r, :]| / 127 (1 for a zero row), q = round(x / scale) */                         \
  /* (half away from zero) clamped to ±127, sums[r] = Σ q[r, :] (quantize.cpp). */                                 \
  OP(void, to_bf16, (const float* x, std::int64_t n, Bf16* y), (x, n, y))                                            \
  OP(void, quantize_rows,                                                                                            \
     (const float* x, std::int64_t rows, int cols, std::int64_t ld, std::int8_t* q, float* scales,                   \
      std::int32_t* sums),                                                                                           \
     (x, rows, cols, ld, q, scales, sums))                                                                           \
  /* Element-wise. */                                                                                                \
  OP(void, add, (const float* a, const float* b, float* y, std::int64_t n), (a, b, y, n)) /* y = a + b */            \
  OP(void, accumulate, (const float* x, float* y, std::int64_t n), (x, y, n))             /* y += x */               \
  OP(void, scale, (float* x, std::int64_t n, float s), (x, n, s))                         /* x *= s */               \
  /* x [rows, cols] + bias [cols] (add_bias_relu: then max(·, 0)) into x, or, where y is not null, */               \
  /* into y rounded to bf16 as to_bf16 rounds, x left as it was (rows a product wrote in float */                    \
  /* and the later passes read in bf16: one pass instead of two). */                                                 \
  OP(void, add_bias, (float* x, const float* bias, std::int64_t rows, int cols, Bf16* y), (x, bias, rows, cols, y))  \
  OP(void, add_bias_relu, (float* x, const float* bias, std::int64_t rows, int cols, Bf16* y),                       \
     (x, bias, rows, cols, y))                                                                                       \
  /* dy *= y > 0, y [n] of type y_dtype (f32 or bf16: a ReLU output kept in either). */                              \
  OP(void, relu_backward, (float* dy, const void* y, DType y_dtype, std::int64_t n), (dy, y, y_dtype, n))            \
  /* dbias += Σ rows of dy; where dy_copy is not null, dy is also written there in copy_dtype (f32 */               \
  /* or bf16: rounded) on the same pass (a Linear's gradient, read by both its backward products). */                \
  /* Where relu is not null (a ReLU output [rows, cols] in relu_type, f32 or bf16), the rows */                      \
  /* summed and copied are dy · (relu > 0), as relu_backward leaves them; dy itself is not */                       \
  /* changed (ReLU's backward folded into the pass that rounds the gradient). */                                     \
  OP(void, bias_grad,                                                                                                \
     (const float* dy, std::int64_t rows, int cols, float* dbias, void* dy_copy, DType copy_dtype, const void* relu, \
      DType relu_type),                                                                                              \
     (dy, rows, cols, dbias, dy_copy, copy_dtype, relu, relu_type))                                                  \
  OP(double, sum_squares, (const float* x, std::int64_t n), (x, n))                                                  \
  /* y = dropout(x) (y may be x): keeps each element with probability 1 - p, scaled by 1 / (1 - p). */               \
  /* The mask is a pure function of (seed, element index): the same call on the gradient in the */                   \
  /* backward pass applies the same mask, so no mask is stored. */                                                   \
  OP(void, dropout, (const float* x, float* y, std::int64_t n, float p, std::uint64_t seed), (x, y, n, p, seed))     \
  /* Layer normalisation over the last dimension of s = x + residual (s = x where residual is */                     \
  /* null), s written to sum where not null (sum may be x or residual: in place); y = gamma · */                    \
  /* (s - mean) · rstd + beta, and where rounded is not null y rounded to bf16 there too (the */                    \
  /* bits to_bf16 gives); mean and rstd ([rows]) kept for backward where not null. The paper's */                    \
  /* sublayer connection LayerNorm(x + sublayer(x)) and the rounding its products read, one pass. */                 \
  OP(void, layernorm,                                                                                                \
     (const float* x, const float* residual, const float* gamma, const float* beta, float* sum, float* y,            \
      Bf16* rounded, float* mean, float* rstd, std::int64_t rows, int cols, float eps),                              \
     (x, residual, gamma, beta, sum, y, rounded, mean, rstd, rows, cols, eps))                                       \
  /* dx = dL/dx (overwritten; dx may be dy), and from it the sublayer's gradient where asked */                      \
  /* (SublayerGradient: what the sublayer reads while its own backward adds into dx); dgamma and */                  \
  /* dbeta are accumulated. */                                                                                       \
  OP(void, layernorm_backward,                                                                                       \
     (const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma, float* dx,          \
      const SublayerGradient& sublayer, float* dgamma, float* dbeta, std::int64_t rows, int cols),                   \
     (dy, x, mean, rstd, gamma, dx, sublayer, dgamma, dbeta, rows, cols))                                            \
  /* probs [rows, heads, keys] = softmax(q·kᵀ/√d_k) under the mask (0 outside it) and ctx */                    \
  /* [rows, heads·d_v] = probs · v, for one query per row over cached keys (CachedAttention). */                   \
  OP(void, cached_attention, (const CachedAttention& a, float* probs, float* ctx), (a, probs, ctx))                  \
  /* out[r] = table[ids[r]] * scale + (positions ? positions[r % seq_len] : 0), rows = n; the table */               \
  /* [vocab, dim] f32 or s8 (each row times its scale). */                                                           \
  OP(void, embedding,                                                                                                \
     (const std::int32_t* ids, std::int64_t n, const MatrixRef& table, int dim, float scale, const float* positions, \
      int seq_len, float* out),                                                                                      \
     (ids, n, table, dim, scale, positions, seq_len, out))                                                           \
  /* dtable[ids[r]] += dout[r] * scale. */                                                                           \
  OP(void, embedding_backward,                                                                                       \
     (const std::int32_t* ids, std::int64_t n, const float* dout, int dim, float scale, float* dtable),              \
     (ids, n, dout, dim, scale, dtable))                                                                             \
  /* dpositions[t] += Σ_b dout[b * seq_len + t] for rows = batch * seq_len. */                                      \
  OP(void, positions_backward, (const float* dout, int batch, int seq_len, int dim, float* dpositions),              \
     (dout, batch, seq_len, dim, dpositions))                                                                        \
  /* Fused log-softmax + label-smoothed cross-entropy over rows of logits [rows, vocab]. Targets */                  \
  /* equal to ignore_id contribute nothing. The target distribution is (1 - smoothing) on the */                     \
  /* target plus smoothing / vocab on every class (PyTorch's definition). The gradient, */                           \
  /* grad_scale * dloss/dlogits (zero rows for ignored targets), goes to grad [rows, vocab] in */                    \
  /* grad_dtype (f32, or bf16 rounded: the output layer reads it so), the logits staying as they */                  \
  /* were; with grad null it overwrites the logits. If row_nll is given, it receives each row's */                   \
  /* -log p(target) (0 for ignored rows), [rows] in device memory. */                                                \
  OP(LossSums, cross_entropy,                                                                                        \
     (float* logits, const std::int32_t* targets, std::int64_t rows, int vocab, float smoothing, int ignore_id,      \
      float grad_scale, float* row_nll, void* grad, DType grad_dtype),                                               \
     (logits, targets, rows, vocab, smoothing, ignore_id, grad_scale, row_nll, grad, grad_dtype))                    \
  /* log-softmax over the last dimension, in place (decoding). */                                                    \
  OP(void, log_softmax, (float* x, std::int64_t rows, int cols), (x, rows, cols))                                    \
  /* Per row: the k largest values in descending order (ties: lower index first) and their */                        \
  /* column indices; 0 <= k <= cols (k = 0 writes nothing). values [rows, k], indices [rows, k]. */                  \
  OP(void, topk, (const float* x, std::int64_t rows, int cols, int k, float* values, std::int32_t* indices),         \
     (x, rows, cols, k, values, indices))                                                                            \
  /* dst row r (at dst + r·dst_stride) = src row indices[r] (at src + indices[r]·src_stride), */                   \
  /* row_floats floats each; indices null means row r. Source and destination must not overlap. */                   \
  OP(void, gather_rows,                                                                                              \
     (const float* src, std::int64_t src_stride, const std::int32_t* indices, std::int64_t rows,                     \
      std::int64_t row_floats, float* dst, std::int64_t dst_stride),                                                 \
     (src, src_stride, indices, rows, row_floats, dst, dst_stride))                                                  \
  /* Rows of a weight matrix in its own type (the output layer restricted to a shortlist): dst */                    \
  /* row r = src's stored row indices[r], cols elements of src.dtype each, src.ld apart in src */                    \
  /* and packed (cols apart) in dst; an s8 matrix's scales and row sums follow their rows into */                    \
  /* dst_scales and dst_row_sums (untouched, and may be null, for f32 and bf16). */                                  \
  OP(void, gather_weight_rows,                                                                                       \
     (const MatrixRef& src, const std::int32_t* indices, std::int64_t rows, std::int64_t cols, void* dst,            \
      float* dst_scales, std::int32_t* dst_row_sums),                                                                \
     (src, indices, rows, cols, dst, dst_scales, dst_row_sums))                                                      \
  /* Adam (Kingma & Ba) with bias correction, on n parameters, in one pass that also leaves the */                   \
  /* gradient zeroed for the next update and, where rounded is not null, writes the new parameters */                \
  /* rounded to bf16 there (the bits to_bf16 gives). */                                                              \
  OP(void, adam,                                                                                                     \
     (float* params, float* grads, float* m, float* v, std::int64_t n, const AdamHyper& hyper, Bf16* rounded),       \
     (params, grads, m, v, n, hyper, rounded))                                                                       \
  /* An exponential moving average of n parameters: average = decay·average + (1 - decay)·x. */                    \
  OP(void, moving_average, (float* average, const float* x, std::int64_t n, float decay), (average, x, n, decay))

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;

  // The matrix product: C = alpha · op(A) · op(B) + beta · C with op(A) m×k, op(B) k×n, C m×n
  // (float, row stride ldc); batch null for one product, else a batch of them (GemmBatch).
  // What it computes in follows from the operands' types and the backend's MatmulPrecision, one
  // rule for single and batched products alike:
  //   f32 × f32: the backend's precision (fp32: float32; bf16: inputs rounded to bfloat16,
  //              float32 sums; an f32 operand's `rounded` values read where it has them);
  //   bf16 with f32 or bf16: bfloat16 inputs, float32 sums;
  //   f32 × s8 (A the activations, not transposed; B an s8 weight, transposed: y = x·Wᵀ): each
  //              row of A quantized on the fly to 8-bit (7-bit without VNNI) unsigned integers with its own scale and
  //              zero point, integer products summed exactly in int32, then scaled back to float.
  //              Single products only.
  // Any other combination throws.
  virtual void matmul(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c,
                      int ldc, const GemmBatch* batch) = 0;
  // A layer's product and its bias: C = A·B + bias (bias [n] added to each row), then ReLU where
  // asked; the same bits as matmul (alpha 1, beta 0) followed by add_bias / add_bias_relu, in one
  // call so that a backend can add the bias as the product stores its sums. C is float [m, n]
  // (rows n apart); given `rounded`, the result goes there in bf16 (as to_bf16 rounds) and C is
  // scratch whose contents are left unspecified. Bias null: the product alone (matmul's bits, then
  // to_bf16's where rounded), which ReLU does not follow.
  virtual void matmul_bias(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, const float* bias, bool relu,
                           float* c, Bf16* rounded) = 0;

  // Mixed precision. A backend whose products round their inputs to bfloat16 anyway can keep
  // activations that only products (and ReLU's gradient) read in bf16: half the memory and no
  // conversion per product. The layers keep the feed-forward hidden layer so (the same results)
  // and attention's projected queries, keys and values (rounded to bf16 before attention's
  // products, as PyTorch's autocast rounds them).
  virtual bool keeps_bf16_activations() const { return false; }

  // Attention (AttentionBlocks), its products computing as matmul's do: probs [batch, heads,
  // queries, keys] (entries outside the mask exactly 0) and ctx [batch·queries, heads·d_v]; given
  // ctx_rounded, ctx goes there in bf16 (as to_bf16 rounds: what the output projection reads) and
  // the float ctx is scratch whose contents are left unspecified.
  virtual void attention(const AttentionBlocks& a, const AttentionMask& mask, float* probs, float* ctx,
                         Bf16* ctx_rounded) = 0;
  // Given the probabilities attention wrote and ∂L/∂ctx: ∂L/∂q, ∂L/∂k and ∂L/∂v, written into float
  // buffers laid out like q, k and v (the same ld and strides; the elements of the heads overwritten).
  // dscores is scratch of probs' size. Given `rounded`, the gradients go there instead (the float
  // buffers are then scratch whose contents are left unspecified).
  virtual void attention_backward(const AttentionBlocks& a, const float* probs, const float* dctx, float* dscores,
                                  float* dq, float* dk, float* dv, const RoundedAttentionGradients* rounded) = 0;

#define ATTN_DECLARE_BACKEND_OP(ret, name, params, args) virtual ret name params = 0;
  ATTN_BACKEND_OPS(ATTN_DECLARE_BACKEND_OP)
#undef ATTN_DECLARE_BACKEND_OP
};

// What the large matrix products (gemm, not gemm_batched) compute in. bf16: inputs rounded to
// bfloat16, products accumulated and stored in float32 (mixed precision, like PyTorch's autocast
// with bfloat16); about twice as fast on CPUs with AVX512-BF16. Everything else stays float32.
enum class MatmulPrecision { fp32, bf16 };

// "fp32" or "bf16"; throws on anything else, naming the accepted values.
MatmulPrecision parse_matmul_precision(const std::string& name);
std::string to_string(MatmulPrecision precision);

// The CPU backend (oneDNN for matrix products, OpenMP for everything else). bf16 throws a clear
// error on a CPU without AVX512-BF16 (oneDNN would emulate it, slower than fp32).
Backend& cpu_backend(MatmulPrecision precision = MatmulPrecision::fp32);

}  // namespace attn
