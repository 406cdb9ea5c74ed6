#include "kernels/cpu/matmul_primitive.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <string>
#include <list>
#include <unordered_map>

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
static_assert(sizeof(MatmulDesc) == 4 * 6 + 8 * 11 + 4 * 2, "MatmulDesc must have no padding bytes");

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
    const auto c = desc(integer ? type::s32 : type::f32, d.m, d.n, d.c_outer, d.c_inner, d.c_row, 1);
    dnnl::primitive_attr attr;
    if (d.alpha != 1.0f) attr.set_output_scales(0, {d.alpha});
    if (d.beta != 0.0f) {
      dnnl::post_ops post;
      post.append_sum(d.beta);
      attr.set_post_ops(post);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine_);
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
void execute(Primitive& p, const void* a, const void* b, void* c) {
  dnnl::memory am(p.desc.src_desc(), cache.engine(), const_cast<void*>(a));
  dnnl::memory bm(p.desc.weights_desc(), cache.engine(), const_cast<void*>(b));
  dnnl::memory cm(p.desc.dst_desc(), cache.engine(), c);
  p.primitive.execute(cache.stream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  cache.stream().wait();
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

void run_matmul(const MatmulDesc& d, const void* a, const void* b, void* c) { execute(cache.get(d), a, b, c); }

std::int64_t matmul_primitives_built() { return cache.built(); }

bool run_matmul_if_fast(const MatmulDesc& d, const void* a, const void* b, float* c) {
  Primitive& p = cache.get(d);
  if (!p.fast) return false;
  execute(p, a, b, c);
  return true;
}

}  // namespace attn::cpu
