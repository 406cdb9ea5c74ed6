#pragma once
// A backend that forwards to another and times every operation, for benchmarks and
// `--profile` runs: which kernel takes the time, with how many calls and FLOPs.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
  // A matrix product as it was called: its shape, operand types, layouts and (for a batch of
  // products) strides, for timing the same product alone (the pointers are not kept valid).
  struct Product {
    int m = 0, n = 0, k = 0;
    float alpha = 1, beta = 0;
    MatrixRef a, b;
    int ldc = 0;
    bool batched = false;
    GemmBatch batch;
    double flops() const;
  };
  // Every matrix product since the last reset, in call order.
  const std::vector<Product>& products() const { return products_; }
  void reset() {
    stats_.clear();
    products_.clear();
  }
  // One line per operation, slowest first.
  std::string report() const;

  std::string name() const override { return inner_.name() + "+profile"; }
  void* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void deallocate(void* p) override { inner_.deallocate(p); }
  bool keeps_bf16_activations() const override { return inner_.keeps_bf16_activations(); }
  // Keyed by operand types, transposition and (single products) shape: "matmul f32·s8 NT 32x2048x512".
  void matmul(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta, float* c, int ldc,
              const GemmBatch* batch) override;
  // A product with its bias: one of products() (as matmul's), keyed like matmul's with "+bias",
  // "+bias+relu" and "->bf16" where the call asks for them.
  void matmul_bias(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, const float* bias, bool relu, float* c,
                   Bf16* rounded) override;
  // Keyed "attention" and "attention_backward", with their products' FLOPs.
  void attention(const AttentionBlocks& a, const AttentionMask& mask, float* probs, float* ctx,
                 Bf16* ctx_rounded) override;
  void attention_backward(const AttentionBlocks& a, const float* probs, const float* dctx, float* dscores, float* dq,
                          float* dk, float* dv, const RoundedAttentionGradients* rounded) override;

#define ATTN_PROFILE_BACKEND_OP(ret, name, params, args)     \
  ret name params override {                                 \
    return time(#name, 0, [&] { return inner_.name args; }); \
  }
  ATTN_BACKEND_OPS(ATTN_PROFILE_BACKEND_OP)
#undef ATTN_PROFILE_BACKEND_OP

 private:
  // Runs f, adds its time to the key's, and returns what f returns.
  template <typename F>
  auto time(const std::string& key, double flops, F&& f) -> decltype(f()) {
    struct Record {  // adds the time on the way out, whatever f returns
      ProfilingBackend& self;
      const std::string& key;
      double flops;
      std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
      ~Record() {
        Stat& s = self.stats_[key];
        s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        s.flops += flops;
        ++s.calls;
      }
    } record{*this, key, flops};
    return f();
  }
  Backend& inner_;
  std::map<std::string, Stat> stats_;
  std::vector<Product> products_;
};

}  // namespace attn
