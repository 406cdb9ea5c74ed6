#pragma once
// A backend that forwards to another and times every operation, for benchmarks and
// `--profile` runs: which kernel takes the time, with how many calls and FLOPs.
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "kernels/backend.h"

namespace attn {

class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(Backend& inner) : inner_(inner) {}

  struct Stat {
    double seconds = 0;
    double flops = 0;
    long calls = 0;
  };
  const std::map<std::string, Stat>& stats() const { return stats_; }
  void reset() { stats_.clear(); }
  // One line per operation, slowest first.
  std::string report() const;

  std::string name() const override { return inner_.name() + "+profile"; }
  void* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void deallocate(void* p) override { inner_.deallocate(p); }
  void copy_to_device(void* d, const void* s, std::size_t n) override {
    time("copy", 0, [&] { inner_.copy_to_device(d, s, n); });
  }
  void copy_to_host(void* d, const void* s, std::size_t n) override {
    time("copy", 0, [&] { inner_.copy_to_host(d, s, n); });
  }
  void copy(void* d, const void* s, std::size_t n) override {
    time("copy", 0, [&] { inner_.copy(d, s, n); });
  }
  void fill(float* x, std::int64_t n, float v) override {
    time("fill", 0, [&] { inner_.fill(x, n, v); });
  }
  void gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    const std::string key = std::string("gemm ") + (ta == Trans::Yes ? "T" : "N") + (tb == Trans::Yes ? "T" : "N") +
                            " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    time(key, 2.0 * m * n * k, [&] { inner_.gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  }
  void gemm_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc, const GemmBatch& batch) override {
    const std::string key =
        std::string("gemm_batched ") + (ta == Trans::Yes ? "T" : "N") + (tb == Trans::Yes ? "T" : "N");
    time(key, 2.0 * m * n * k * batch.outer * batch.inner,
         [&] { inner_.gemm_batched(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, batch); });
  }
  bool keeps_bf16_activations() const override { return inner_.keeps_bf16_activations(); }
  void to_bf16(const float* x, std::int64_t n, Bf16* y) override {
    time("to_bf16", 0, [&] { inner_.to_bf16(x, n, y); });
  }
  void gemm_mixed(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a16, int lda, const void* b,
                  bool b16, int ldb, float beta, float* c, int ldc) override {
    const std::string key = std::string("gemm_mixed ") + (ta == Trans::Yes ? "T" : "N") +
                            (tb == Trans::Yes ? "T" : "N") + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                            std::to_string(k);
    time(key, 2.0 * m * n * k,
         [&] { inner_.gemm_mixed(ta, tb, m, n, k, alpha, a, a16, lda, b, b16, ldb, beta, c, ldc); });
  }
  void gemm_batched_mixed(Trans ta, Trans tb, int m, int n, int k, float alpha, const void* a, bool a16, int lda,
                          const void* b, bool b16, int ldb, float beta, float* c, int ldc,
                          const GemmBatch& batch) override {
    const std::string key =
        std::string("gemm_batched_mixed ") + (ta == Trans::Yes ? "T" : "N") + (tb == Trans::Yes ? "T" : "N");
    time(key, 2.0 * m * n * k * batch.outer * batch.inner,
         [&] { inner_.gemm_batched_mixed(ta, tb, m, n, k, alpha, a, a16, lda, b, b16, ldb, beta, c, ldc, batch); });
  }
  void relu_backward(float* dy, const Bf16* y, std::int64_t n) override {
    time("relu_backward", 0, [&] { inner_.relu_backward(dy, y, n); });
  }
  void bias_grad_to_bf16(const float* dy, std::int64_t r, int c, float* db, Bf16* dy16) override {
    time("bias_grad_to_bf16", 0, [&] { inner_.bias_grad_to_bf16(dy, r, c, db, dy16); });
  }
  void add(const float* a, const float* b, float* y, std::int64_t n) override {
    time("add", 0, [&] { inner_.add(a, b, y, n); });
  }
  void accumulate(const float* x, float* y, std::int64_t n) override {
    time("accumulate", 0, [&] { inner_.accumulate(x, y, n); });
  }
  void scale(float* x, std::int64_t n, float s) override {
    time("scale", 0, [&] { inner_.scale(x, n, s); });
  }
  void add_bias(float* x, const float* b, std::int64_t r, int c) override {
    time("add_bias", 0, [&] { inner_.add_bias(x, b, r, c); });
  }
  void add_bias_relu(float* x, const float* b, std::int64_t r, int c) override {
    time("add_bias_relu", 0, [&] { inner_.add_bias_relu(x, b, r, c); });
  }
  void relu_backward(float* dy, const float* y, std::int64_t n) override {
    time("relu_backward", 0, [&] { inner_.relu_backward(dy, y, n); });
  }
  void bias_grad(const float* dy, std::int64_t r, int c, float* db) override {
    time("bias_grad", 0, [&] { inner_.bias_grad(dy, r, c, db); });
  }
  double sum_squares(const float* x, std::int64_t n) override {
    double v = 0;
    time("sum_squares", 0, [&] { v = inner_.sum_squares(x, n); });
    return v;
  }
  void dropout(const float* x, float* y, std::int64_t n, float p, std::uint64_t seed) override {
    time("dropout", 0, [&] { inner_.dropout(x, y, n, p, seed); });
  }
  void layernorm(const float* x, const float* g, const float* b, float* y, float* m, float* r, std::int64_t rows,
                 int cols, float eps) override {
    time("layernorm", 0, [&] { inner_.layernorm(x, g, b, y, m, r, rows, cols, eps); });
  }
  void layernorm_backward(const float* dy, const float* x, const float* m, const float* r, const float* g, float* dx,
                          float* dg, float* db, std::int64_t rows, int cols) override {
    time("layernorm_backward", 0, [&] { inner_.layernorm_backward(dy, x, m, r, g, dx, dg, db, rows, cols); });
  }
  void attention_softmax(float* s, int b, int h, int tq, int tk, const AttentionMask& mask, float scale) override {
    time("attention_softmax", 0, [&] { inner_.attention_softmax(s, b, h, tq, tk, mask, scale); });
  }
  void attention_softmax_backward(float* d, const float* p, std::int64_t rows, int tk, float scale) override {
    time("attention_softmax_backward", 0, [&] { inner_.attention_softmax_backward(d, p, rows, tk, scale); });
  }
  void embedding(const std::int32_t* ids, std::int64_t n, const float* t, int dim, float s, const float* pos, int len,
                 float* out) override {
    time("embedding", 0, [&] { inner_.embedding(ids, n, t, dim, s, pos, len, out); });
  }
  void embedding_backward(const std::int32_t* ids, std::int64_t n, const float* d, int dim, float s,
                          float* dt) override {
    time("embedding_backward", 0, [&] { inner_.embedding_backward(ids, n, d, dim, s, dt); });
  }
  void positions_backward(const float* d, int b, int len, int dim, float* dp) override {
    time("positions_backward", 0, [&] { inner_.positions_backward(d, b, len, dim, dp); });
  }
  LossSums cross_entropy(float* l, const std::int32_t* t, std::int64_t rows, int v, float s, int ig, float gs,
                         float* nll) override {
    LossSums r;
    time("cross_entropy", 0, [&] { r = inner_.cross_entropy(l, t, rows, v, s, ig, gs, nll); });
    return r;
  }
  LossSums cross_entropy_to_bf16(float* l, const std::int32_t* t, std::int64_t rows, int v, float s, int ig, float gs,
                                 Bf16* g) override {
    LossSums r;
    time("cross_entropy_to_bf16", 0, [&] { r = inner_.cross_entropy_to_bf16(l, t, rows, v, s, ig, gs, g); });
    return r;
  }
  void log_softmax(float* x, std::int64_t rows, int cols) override {
    time("log_softmax", 0, [&] { inner_.log_softmax(x, rows, cols); });
  }
  void topk(const float* x, std::int64_t rows, int cols, int k, float* v, std::int32_t* i) override {
    time("topk", 0, [&] { inner_.topk(x, rows, cols, k, v, i); });
  }
  void gather_rows(const float* src, std::int64_t ss, const std::int32_t* idx, std::int64_t rows, std::int64_t n,
                   float* dst, std::int64_t ds) override {
    time("gather_rows", 0, [&] { inner_.gather_rows(src, ss, idx, rows, n, dst, ds); });
  }
  void adam(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamHyper& h) override {
    time("adam", 0, [&] { inner_.adam(p, g, m, v, n, h); });
  }

 private:
  template <typename F>
  void time(const std::string& key, double flops, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    Stat& s = stats_[key];
    s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.flops += flops;
    ++s.calls;
  }
  Backend& inner_;
  std::map<std::string, Stat> stats_;
};

}  // namespace attn
