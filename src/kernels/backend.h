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

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Memory.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void fill(float* x, std::int64_t n, float value) = 0;

  // Linear algebra: C = alpha * op(A) op(B) + beta * C with op(A) m×k, op(B) k×n, C m×n.
  virtual void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc) = 0;
  virtual void gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c, int ldc, const GemmBatch& batch) = 0;

  // Mixed precision. A backend whose products round their inputs to bfloat16 anyway can keep
  // activations that only products (and ReLU's gradient) read in bf16: half the memory and no
  // conversion per product. The layers keep the feed-forward hidden layer so (the same results)
  // and attention's projected queries, keys and values (rounded to bf16 before attention's
  // products, as PyTorch's autocast rounds them). Where this is false the calls below are never made.
  virtual bool keeps_bf16_activations() const { return false; }
  virtual void to_bf16(const float* x, std::int64_t n, Bf16* y);
  // gemm with A and/or B given as bf16 (a_bf16, b_bf16); the others are float.
  virtual void gemm_mixed(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a_bf16, int lda,
                          const void* b, bool b_bf16, int ldb, float beta, float* c, int ldc);
  virtual void relu_backward(float* dy, const Bf16* y, std::int64_t n);  // dy *= y > 0
  // bias_grad, and dy rounded into dy_bf16 on the same pass (a Linear's gradient, read by both of
  // its backward products in bf16).
  virtual void bias_grad_to_bf16(const float* dy, std::int64_t rows, int cols, float* dbias, Bf16* dy_bf16);
  // gemm_batched in bf16, for training attention: A and B, each float or bf16 (attention's kept
  // queries, keys and values), rounded to bf16 and their products summed in float32, as autocast's
  // bmm does. A backend without a bf16 kernel for the shape computes in float32 instead.
  virtual void gemm_batched_mixed(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a_bf16,
                                  int lda, const void* b, bool b_bf16, int ldb, float beta, float* c, int ldc,
                                  const GemmBatch& batch);
  // (The defaults refuse: only a backend that keeps bf16 activations is asked.)

  // Element-wise.
  virtual void add(const float* a, const float* b, float* y, std::int64_t n) = 0;  // y = a + b
  virtual void accumulate(const float* x, float* y, std::int64_t n) = 0;           // y += x
  virtual void scale(float* x, std::int64_t n, float s) = 0;                       // x *= s
  virtual void add_bias(float* x, const float* bias, std::int64_t rows, int cols) = 0;
  virtual void add_bias_relu(float* x, const float* bias, std::int64_t rows, int cols) = 0;
  virtual void relu_backward(float* dy, const float* y, std::int64_t n) = 0;               // dy *= y > 0
  virtual void bias_grad(const float* dy, std::int64_t rows, int cols, float* dbias) = 0;  // dbias += Σ rows
  virtual double sum_squares(const float* x, std::int64_t n) = 0;

  // y = dropout(x) (y may be x): keeps each element with probability 1 - p, scaled by 1 / (1 - p).
  // The mask is a pure function of (seed, element index): the same call on the gradient in the
  // backward pass applies the same mask, so no mask is stored.
  virtual void dropout(const float* x, float* y, std::int64_t n, float p, std::uint64_t seed) = 0;

  // Layer normalisation over the last dimension; mean and rstd ([rows]) are kept for backward.
  virtual void layernorm(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                         std::int64_t rows, int cols, float eps) = 0;
  // dx = ∂L/∂x (overwritten); dgamma and dbeta are accumulated.
  virtual void layernorm_backward(const float* dy, const float* x, const float* mean, const float* rstd,
                                  const float* gamma, float* dx, float* dgamma, float* dbeta, std::int64_t rows,
                                  int cols) = 0;

  // Attention: scores [batch, heads, tq, tk] are scaled, masked and turned into probabilities in
  // place; masked entries become exactly 0.
  virtual void attention_softmax(float* scores, int batch, int heads, int tq, int tk, const AttentionMask& mask,
                                 float scale) = 0;
  // In place: dprobs becomes ∂L/∂scores (including the scale) given the probabilities.
  virtual void attention_softmax_backward(float* dprobs, const float* probs, std::int64_t rows, int tk,
                                          float scale) = 0;

  // out[r] = table[ids[r]] * scale + (positions ? positions[r % seq_len] : 0), rows = n.
  virtual void embedding(const std::int32_t* ids, std::int64_t n, const float* table, int dim, float scale,
                         const float* positions, int seq_len, float* out) = 0;
  // dtable[ids[r]] += dout[r] * scale.
  virtual void embedding_backward(const std::int32_t* ids, std::int64_t n, const float* dout, int dim, float scale,
                                  float* dtable) = 0;
  // dpositions[t] += Σ_b dout[b * seq_len + t] for rows = batch * seq_len.
  virtual void positions_backward(const float* dout, int batch, int seq_len, int dim, float* dpositions) = 0;

  // Fused log-softmax + label-smoothed cross-entropy over rows of logits [rows, vocab]. Targets
  // equal to ignore_id contribute nothing. The target distribution is (1 - smoothing) on the
  // target plus smoothing / vocab on every class (PyTorch's definition). Logits are overwritten
  // by grad_scale * ∂loss/∂logits (zero rows for ignored targets). If row_nll is given, it
  // receives each row's -log p(target) (0 for ignored rows), [rows] in device memory.
  virtual LossSums cross_entropy(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab,
                                 float smoothing, int ignore_id, float grad_scale, float* row_nll) = 0;

  // The same with the gradient written to grad, rounded to bf16 (the output layer reads it so);
  // the logits stay as they were. Only on a backend that keeps bf16 activations.
  virtual LossSums cross_entropy_to_bf16(float* logits, const std::int32_t* targets, std::int64_t rows, int vocab,
                                         float smoothing, int ignore_id, float grad_scale, Bf16* grad);

  // log-softmax over the last dimension, in place (decoding).
  virtual void log_softmax(float* x, std::int64_t rows, int cols) = 0;
  // Per row: the k largest values in descending order (ties: lower index first) and their
  // column indices; k <= cols. values [rows, k], indices [rows, k].
  virtual void topk(const float* x, std::int64_t rows, int cols, int k, float* values, std::int32_t* indices) = 0;
  // dst row r (at dst + r·dst_stride) = src row indices[r] (at src + indices[r]·src_stride),
  // row_floats floats each; indices null means row r. Source and destination must not overlap.
  virtual void gather_rows(const float* src, std::int64_t src_stride, const std::int32_t* indices, std::int64_t rows,
                           std::int64_t row_floats, float* dst, std::int64_t dst_stride) = 0;

  // Adam (Kingma & Ba) with bias correction, on n parameters.
  virtual void adam(float* params, const float* grads, float* m, float* v, std::int64_t n, const AdamHyper& hyper) = 0;
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

inline void Backend::to_bf16(const float*, std::int64_t, Bf16*) {
  throw std::logic_error(name() + " keeps no bf16 activations");
}
inline void Backend::gemm_mixed(Trans, Trans, int, int, int, float, const void*, bool, int, const void*, bool, int,
                                float, float*, int) {
  throw std::logic_error(name() + " keeps no bf16 activations");
}
inline void Backend::gemm_batched_mixed(Trans, Trans, int, int, int, float, const void*, bool, int, const void*, bool,
                                        int, float, float*, int, const GemmBatch&) {
  throw std::logic_error(name() + " keeps no bf16 activations");
}
inline void Backend::bias_grad_to_bf16(const float*, std::int64_t, int, float*, Bf16*) {
  throw std::logic_error(name() + " keeps no bf16 activations");
}
inline LossSums Backend::cross_entropy_to_bf16(float*, const std::int32_t*, std::int64_t, int, float, int, float,
                                               Bf16*) {
  throw std::logic_error(name() + " keeps no bf16 activations");
}
inline void Backend::relu_backward(float*, const Bf16*, std::int64_t) {
  throw std::logic_error(name() + " keeps no bf16 activations");
}

}  // namespace attn
