#include "kernels/profiling_backend.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace attn {

double ProfilingBackend::Product::flops() const {
  return 2.0 * m * n * k * (batched ? static_cast<double>(batch.outer) * batch.inner : 1.0);
}

void ProfilingBackend::matmul(int m, int n, int k, float alpha, const MatrixRef& a, const MatrixRef& b, float beta,
                              float* c, int ldc, const GemmBatch* batch) {
  char key[96];
  products_.push_back({m, n, k, alpha, beta, a, b, ldc, batch != nullptr, batch ? *batch : GemmBatch{}});
  const double flops = products_.back().flops();
  // A float operand with its bf16 rounding at hand (MatrixRef::rounded) shows as f32(bf16).
  const auto type = [](const MatrixRef& x) { return x.rounded ? "f32(bf16)" : to_string(x.dtype); };
  const char* ta = a.trans == Trans::Yes ? "T" : "N";
  const char* tb = b.trans == Trans::Yes ? "T" : "N";
  if (batch) {
    std::snprintf(key, sizeof key, "matmul %s·%s %s%s batched", type(a), type(b), ta, tb);
  } else {
    std::snprintf(key, sizeof key, "matmul %s·%s %s%s %dx%dx%d", type(a), type(b), ta, tb, m, n, k);
  }
  time(key, flops, [&] { inner_.matmul(m, n, k, alpha, a, b, beta, c, ldc, batch); });
}

void ProfilingBackend::matmul_bias(int m, int n, int k, const MatrixRef& a, const MatrixRef& b, const float* bias,
                                   bool relu, float* c, Bf16* rounded) {
  char key[128];
  products_.push_back({m, n, k, 1.0f, 0.0f, a, b, n, false, GemmBatch{}});
  const double flops = products_.back().flops();
  const auto type = [](const MatrixRef& x) { return x.rounded ? "f32(bf16)" : to_string(x.dtype); };
  const char* const epilogue = !bias ? "" : relu ? "+bias+relu" : "+bias";
  std::snprintf(key, sizeof key, "matmul %s·%s %s%s %dx%dx%d %s%s", type(a), type(b), a.trans == Trans::Yes ? "T" : "N",
                b.trans == Trans::Yes ? "T" : "N", m, n, k, epilogue, rounded ? "->bf16" : "");
  time(key, flops, [&] { inner_.matmul_bias(m, n, k, a, b, bias, relu, c, rounded); });
}

namespace {
// The FLOPs of attention's two products (scores, context) over all blocks.
double attention_flops(const AttentionBlocks& a) { return 2.0 * static_cast<double>(a.probs_size()) * (a.d_k + a.d_v); }
}  // namespace

void ProfilingBackend::attention(const AttentionBlocks& a, const AttentionMask& mask, float* probs, float* ctx,
                                 Bf16* ctx_rounded) {
  time("attention", attention_flops(a), [&] { inner_.attention(a, mask, probs, ctx, ctx_rounded); });
}

void ProfilingBackend::attention_backward(const AttentionBlocks& a, const float* probs, const float* dctx,
                                          float* dscores, float* dq, float* dk, float* dv,
                                          const RoundedAttentionGradients* rounded) {
  // Four products: dV, dP, dQ and dK.
  time("attention_backward", 2 * attention_flops(a),
       [&] { inner_.attention_backward(a, probs, dctx, dscores, dq, dk, dv, rounded); });
}

std::string ProfilingBackend::report() const {
  std::vector<std::pair<std::string, Stat>> rows(stats_.begin(), stats_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double total = 0;
  for (const auto& r : rows) total += r.second.seconds;
  std::string out;
  char line[256];
  for (const auto& [key, s] : rows) {
    std::snprintf(line, sizeof line, "%-36s %7.1f ms %5.1f%% %6ld calls", key.c_str(), s.seconds * 1e3,
                  100 * s.seconds / total, s.calls);
    out += line;
    if (s.flops > 0) {
      std::snprintf(line, sizeof line, " %7.1f GFLOP/s", s.flops / s.seconds / 1e9);
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace attn
