#include "kernels/cpu/matmul_primitive.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace attn::cpu {
namespace {

struct DescHash {
  std::size_t operator()(const MatmulDesc& d) const {
    // The struct has no padding (checked below), so its bytes are its value.
    const auto* p = reinterpret_cast<const unsigned char*>(&d);
    std::size_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < sizeof d; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
  }
};
static_assert(sizeof(MatmulDesc) == 4 * 6 + 8 * 11 + 4 * 2 + 4 * 2, "MatmulDesc must have no padding bytes");

struct Primitive {
  dnnl::matmul::primitive_desc desc;
  dnnl::matmul primitive;
  bool fast;  // oneDNN's brgemm kernel, not a generic fallback
};

class PrimitiveCache {
 public:
  Primitive& get(const MatmulDesc& d) {
    // oneDNN fixes a primitive's thread count when it builds it: after omp_set_num_threads the
    // primitives built for the old count are dropped, not run on it.
    if (const int threads = omp_get_max_threads(); threads != threads_) {
      index_.clear();
      order_.clear();
      threads_ = threads;
    }
    auto it = index_.find(d);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    if (index_.size() >= kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(d, build(d));
    ++built_;
    index_[d] = order_.begin();
    return order_.front().second;
  }
  const dnnl::engine& engine() const { return engine_; }
  std::int64_t built() const { return built_; }
  dnnl::stream& stream() { return stream_; }

 private:
  // A training run sees a few dozen shapes per batch length; decoding a few per source length.
  static constexpr std::size_t kCapacity = 512;

  Primitive build(const MatmulDesc& d) {
    using dims = dnnl::memory::dims;
    using type = dnnl::memory::data_type;
    const bool integer = d.input == MatmulInput::u8s8;
    const type a_type = integer ? type::u8 : d.input == MatmulInput::bf16 ? type::bf16 : type::f32;
    const type b_type = integer ? type::s8 : a_type;
    const bool batched = d.outer * d.inner > 1;
    auto desc = [&](type t, dnnl::memory::dim rows, dnnl::memory::dim cols, std::int64_t outer, std::int64_t inner,
                    std::int64_t row, std::int64_t col) {
      if (!batched) return dnnl::memory::desc({rows, cols}, t, dims{row, col});
      return dnnl::memory::desc({d.outer, d.inner, rows, cols}, t, dims{outer, inner, row, col});
    };
    const auto a = desc(a_type, d.m, d.k, d.a_outer, d.a_inner, d.a_row, d.a_col);
    const auto b = desc(b_type, d.k, d.n, d.b_outer, d.b_inner, d.b_row, d.b_col);
    const type c_type = integer ? type::s32 : d.output == MatmulOutput::bf16 ? type::bf16 : type::f32;
    const auto c = desc(c_type, d.m, d.n, d.c_outer, d.c_inner, d.c_row, 1);
    dnnl::primitive_attr attr;
    if (d.alpha != 1.0f) attr.set_output_scales(0, {d.alpha});
    dnnl::post_ops post;
    if (d.beta != 0.0f) post.append_sum(d.beta);
    if (d.epilogue == kBiasRelu) post.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    if (post.len() > 0) attr.set_post_ops(post);
    const bool bias = (d.epilogue & kBias) != 0;
    ATTN_CHECK(!bias || !batched, "a bias is added to single products only");
    const auto matmul_desc = bias ? dnnl::matmul::desc(a, b, dnnl::memory::desc({1, d.n}, type::f32, dims{d.n, 1}), c)
                                  : dnnl::matmul::desc(a, b, c);
    dnnl::matmul::primitive_desc pd(matmul_desc, attr, engine_);
    return Primitive{pd, dnnl::matmul(pd), std::strncmp(pd.impl_info_str(), "brg", 3) == 0};
  }

  int threads_ = 0;
  std::int64_t built_ = 0;
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  std::list<std::pair<MatmulDesc, Primitive>> order_;
  std::unordered_map<MatmulDesc, std::list<std::pair<MatmulDesc, Primitive>>::iterator, DescHash> index_;
};

thread_local PrimitiveCache cache;

// oneDNN takes non-const handles; the inputs are only read.
void execute(Primitive& p, const void* a, const void* b, void* c, const float* bias) {
  dnnl::memory am(p.desc.src_desc(), cache.engine(), const_cast<void*>(a));
  dnnl::memory bm(p.desc.weights_desc(), cache.engine(), const_cast<void*>(b));
  dnnl::memory cm(p.desc.dst_desc(), cache.engine(), c);
  if (bias) {
    dnnl::memory biasm(p.desc.bias_desc(), cache.engine(), const_cast<float*>(bias));
    p.primitive.execute(cache.stream(),
                        {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_BIAS, biasm}, {DNNL_ARG_DST, cm}});
  } else {
    p.primitive.execute(cache.stream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  }
  cache.stream().wait();
}

// A run's products come in hundreds of row counts (a training batch's sentences × padded length,
// a beam's live hypotheses), and each new shape JIT-compiles a primitive: with bf16 in training,
// 1-5 ms each on one core while the other waits, ~10% of a cpu-hour update. So the rows of a bf16
// or int8 product are cut at a multiple of kMatmulShapeStep and the rest runs padded to
// kMatmulShapeStep rows: each layer's products take one shape per kMatmulShapeStep of rows instead of
// one per row count. Up to kMatmulShapeStep rows, products keep their own shape (a decoding step's few
// rows would pay up to 64x the work). float32 products keep their shapes: oneDNN builds their AVX-512
// kernels in ~0.2 ms, and the padding made an fp32 beam search 16% slower where it made the int8 one
// 7% faster (docs/benchmarks.md).
bool cut_rows(const MatmulDesc& d) {
  return d.input != MatmulInput::f32 && d.outer * d.inner == 1 && d.m > kMatmulShapeStep && d.m % kMatmulShapeStep != 0;
}

// The bytes of one element of A: only bf16 and int8 products are cut.
std::size_t a_element_bytes(MatmulInput input) { return input == MatmulInput::u8s8 ? 1 : 2; }

template <typename T>
void copy_stored_columns(const T* a, std::int64_t row, std::int64_t col, int from, int rows, int k, T* out) {
  for (int p = 0; p < k; ++p)
    for (int r = 0; r < rows; ++r) out[std::int64_t{r} * k + p] = a[(from + r) * row + p * col];
}

// Rows [from, from + rows) of op(A) (strides row, col, in elements of `bytes` bytes: 1 or 2), copied
// densely (k apart) into `out`.
void copy_rows(const void* a, std::size_t bytes, std::int64_t row, std::int64_t col, int from, int rows, int k,
               void* out) {
  if (col == 1) {
    const auto* src = static_cast<const unsigned char*>(a);
    auto* dst = static_cast<unsigned char*>(out);
    for (int r = 0; r < rows; ++r)
      std::memcpy(dst + std::int64_t{r} * k * bytes, src + (from + r) * row * bytes, bytes * k);
  } else if (bytes == 1) {  // a transposed A: its rows are stored columns
    copy_stored_columns(static_cast<const std::uint8_t*>(a), row, col, from, rows, k, static_cast<std::uint8_t*>(out));
  } else {
    copy_stored_columns(static_cast<const std::uint16_t*>(a), row, col, from, rows, k,
                        static_cast<std::uint16_t*>(out));
  }
}

// `rows` rows of n elements of `bytes` bytes (C's: float, int32 or bf16), from rows `from_ld` apart
// to rows `to_ld` apart.
void copy_c_rows(const void* from, std::int64_t from_ld, void* to, std::int64_t to_ld, int rows, int n,
                 std::size_t bytes) {
  const auto* src = static_cast<const unsigned char*>(from);
  auto* dst = static_cast<unsigned char*>(to);
  const auto row_bytes = static_cast<std::int64_t>(bytes);
#pragma omp parallel for schedule(static) if (std::int64_t{rows} * n > (1 << 15))
  for (int r = 0; r < rows; ++r) std::memcpy(dst + r * to_ld * row_bytes, src + r * from_ld * row_bytes, bytes * n);
}

// Runs d, its rows cut as above.
void run(const MatmulDesc& d, const void* a, const void* b, void* c, const float* bias) {
  if (!cut_rows(d)) return execute(cache.get(d), a, b, c, bias);
  const int head = d.m - d.m % kMatmulShapeStep, rows = d.m % kMatmulShapeStep;
  MatmulDesc head_desc = d, tail_desc = d;
  head_desc.m = head;
  // The tail: A's last rows and C's, dense (k and n apart), padded to kMatmulShapeStep rows.
  tail_desc.m = kMatmulShapeStep;
  tail_desc.a_row = d.k, tail_desc.a_col = 1;
  tail_desc.c_row = d.n;
  execute(cache.get(head_desc), a, b, c, bias);
  // Scratch that only grows (its padding rows are never zeroed: row i of the product reads only
  // row i of A, so they reach only C's padding rows, which are dropped). C's elements are 4 bytes
  // (float or int32) or 2 (bf16); A's take no more room than that.
  thread_local std::vector<float> a_tail, c_tail;
  const auto at_least = [](std::vector<float>& v, std::size_t count) {
    if (v.size() < count) v.resize(count);
  };
  at_least(a_tail, static_cast<std::size_t>(kMatmulShapeStep) * d.k);
  at_least(c_tail, static_cast<std::size_t>(kMatmulShapeStep) * d.n);
  copy_rows(a, a_element_bytes(d.input), d.a_row, d.a_col, head, rows, d.k, a_tail.data());
  const std::size_t c_bytes = d.output == MatmulOutput::bf16 ? 2 : 4;
  auto* c_rows = static_cast<unsigned char*>(c) + head * d.c_row * static_cast<std::int64_t>(c_bytes);
  if (d.beta != 0.0f) copy_c_rows(c_rows, d.c_row, c_tail.data(), d.n, rows, d.n, c_bytes);
  execute(cache.get(tail_desc), a_tail.data(), b, c_tail.data(), bias);
  copy_c_rows(c_tail.data(), d.n, c_rows, d.c_row, rows, d.n, c_bytes);
}

}  // namespace

MatmulDesc matmul_desc(Trans ta, Trans tb, int m, int n, int k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                       float alpha, float beta) {
  MatmulDesc d;
  d.m = m, d.n = n, d.k = k;
  // A transposed operand is the same storage read with row and column strides swapped.
  d.a_row = ta == Trans::Yes ? 1 : lda, d.a_col = ta == Trans::Yes ? lda : 1;
  d.b_row = tb == Trans::Yes ? 1 : ldb, d.b_col = tb == Trans::Yes ? ldb : 1;
  d.c_row = ldc;
  d.alpha = alpha, d.beta = beta;
  return d;
}

void run_matmul(const MatmulDesc& d, const void* a, const void* b, void* c, const float* bias) {
  ATTN_CHECK(((d.epilogue & kBias) != 0) == (bias != nullptr), "a product's bias is given where its epilogue adds one");
  ATTN_CHECK(d.output == MatmulOutput::f32 || d.input != MatmulInput::u8s8, "an integer product writes int32");
  run(d, a, b, c, bias);
}

std::int64_t matmul_primitives_built() { return cache.built(); }

bool run_matmul_if_fast(const MatmulDesc& d, const void* a, const void* b, float* c) {
  ATTN_CHECK(d.input == MatmulInput::f32, "run_matmul_if_fast takes float32 products (their shapes are never cut)");
  Primitive& p = cache.get(d);
  if (!p.fast) return false;
  execute(p, a, b, c, nullptr);
  return true;
}

}  // namespace attn::cpu
