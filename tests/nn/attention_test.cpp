// Scaled dot-product attention, forward and backward, against a double-precision reference
// written from the paper's formula: heads read in place from shared projection rows (self-
// attention's Q, K and V side by side; cross-attention's queries and memory apart), padding,
// causal and window masks, d_k ≠ d_v, blocks for the small-block kernels and blocks too large for them.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/bf16_rounding.h"
#include "common/device_vector.h"
#include "kernels/cpu/ops.h"
#include "nn/attention.h"

namespace attn {
namespace {

using testing::random_values;

struct Case {
  std::string name;
  int batch, heads, d_k, d_v, queries, keys;
  bool self;  // Q, K and V in one buffer of rows [Q | K | V]
  AttentionMask mask;
  std::vector<std::int32_t> key_lengths;  // empty: no padding
};

// Host copies of the operands, as the reference reads them: element (b, t, h, i) of x at
// x[(b·length + t)·ld + offset + h·d + i].
struct Operand {
  const std::vector<float>* rows;
  int ld, offset, length;
  double at(int b, int t, int h, int d, int i) const {
    return (*rows)[static_cast<std::size_t>(b * length + t) * ld + offset + h * d + i];
  }
};

struct Reference {
  std::vector<double> probs, ctx, dq, dk, dv;  // probs [b, h, i, j]; the others as Operand's layout
};

bool visible(const Case& c, int b, int i, int j) {
  const int pos = i + c.mask.query_offset;
  if (!c.key_lengths.empty() && j >= c.key_lengths[b]) return false;
  if (c.mask.causal && j > pos) return false;
  return c.mask.window == 0 || std::abs(pos - j) <= c.mask.window;
}

// softmax(Q·Kᵀ/√d_k)·V per sentence and head, and the gradients of Σ dctx ⊙ ctx.
Reference reference(const Case& c, Operand q, Operand k, Operand v, const std::vector<float>& dctx, int ld_grad_q,
                    int ld_grad_kv) {
  Reference r;
  const int H = c.heads, Tq = c.queries, Tk = c.keys;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d_k));
  r.probs.assign(static_cast<std::size_t>(c.batch) * H * Tq * Tk, 0.0);
  r.ctx.assign(static_cast<std::size_t>(c.batch) * Tq * H * c.d_v, 0.0);
  r.dq.assign(static_cast<std::size_t>(c.batch) * Tq * ld_grad_q, 0.0);
  r.dk.assign(static_cast<std::size_t>(c.batch) * Tk * ld_grad_kv, 0.0);
  r.dv.assign(r.dk.size(), 0.0);
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < H; ++h) {
      std::vector<double> p(static_cast<std::size_t>(Tq) * Tk, 0.0), ds(p.size(), 0.0);
      for (int i = 0; i < Tq; ++i) {
        double max = -std::numeric_limits<double>::infinity(), sum = 0;
        std::vector<double> s(Tk);
        for (int j = 0; j < Tk; ++j) {
          s[j] = 0;
          for (int e = 0; e < c.d_k; ++e) s[j] += q.at(b, i, h, c.d_k, e) * k.at(b, j, h, c.d_k, e);
          s[j] *= scale;
          if (visible(c, b, i, j)) max = std::max(max, s[j]);
        }
        for (int j = 0; j < Tk; ++j)
          if (visible(c, b, i, j)) sum += std::exp(s[j] - max);
        for (int j = 0; j < Tk; ++j) p[i * Tk + j] = visible(c, b, i, j) ? std::exp(s[j] - max) / sum : 0.0;
      }
      auto dctx_at = [&](int i, int e) {
        return dctx[static_cast<std::size_t>(b * Tq + i) * H * c.d_v + h * c.d_v + e];
      };
      for (int i = 0; i < Tq; ++i) {
        for (int j = 0; j < Tk; ++j) r.probs[((static_cast<std::size_t>(b) * H + h) * Tq + i) * Tk + j] = p[i * Tk + j];
        for (int e = 0; e < c.d_v; ++e) {
          double sum = 0;
          for (int j = 0; j < Tk; ++j) sum += p[i * Tk + j] * v.at(b, j, h, c.d_v, e);
          r.ctx[static_cast<std::size_t>(b * Tq + i) * H * c.d_v + h * c.d_v + e] = sum;
        }
        // dP = dctx·Vᵀ, dS = P ⊙ (dP − Σ P ⊙ dP)
        std::vector<double> dp(Tk);
        double dot = 0;
        for (int j = 0; j < Tk; ++j) {
          dp[j] = 0;
          for (int e = 0; e < c.d_v; ++e) dp[j] += dctx_at(i, e) * v.at(b, j, h, c.d_v, e);
          dot += dp[j] * p[i * Tk + j];
        }
        for (int j = 0; j < Tk; ++j) ds[i * Tk + j] = p[i * Tk + j] * (dp[j] - dot);
      }
      for (int i = 0; i < Tq; ++i)
        for (int e = 0; e < c.d_k; ++e) {
          double sum = 0;
          for (int j = 0; j < Tk; ++j) sum += ds[i * Tk + j] * k.at(b, j, h, c.d_k, e);
          r.dq[static_cast<std::size_t>(b * Tq + i) * ld_grad_q + q.offset + h * c.d_k + e] = scale * sum;
        }
      for (int j = 0; j < Tk; ++j) {
        for (int e = 0; e < c.d_k; ++e) {
          double sum = 0;
          for (int i = 0; i < Tq; ++i) sum += ds[i * Tk + j] * q.at(b, i, h, c.d_k, e);
          r.dk[static_cast<std::size_t>(b * Tk + j) * ld_grad_kv + k.offset + h * c.d_k + e] = scale * sum;
        }
        for (int e = 0; e < c.d_v; ++e) {
          double sum = 0;
          for (int i = 0; i < Tq; ++i) sum += p[i * Tk + j] * dctx_at(i, e);
          r.dv[static_cast<std::size_t>(b * Tk + j) * ld_grad_kv + v.offset + h * c.d_v + e] = sum;
        }
      }
    }
  return r;
}

// Each element within tolerance · (1 + |want|), naming the first that is not.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i]))) << what << " element " << i;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // Self-attention (9 positions: the AVX-512 small-block kernels): plain, padded, causal, restricted to a window.
  out.push_back({"self", 3, 2, 16, 8, 9, 9, true, {}, {}});
  out.push_back({"self_padded", 3, 2, 16, 8, 9, 9, true, {}, {9, 5, 7}});
  out.push_back({"self_causal", 3, 2, 16, 8, 9, 9, true, {nullptr, true, 0, 0}, {}});
  out.push_back({"self_window", 3, 2, 16, 8, 9, 9, true, {nullptr, false, 0, 2}, {9, 4, 8}});
  // Encoder-decoder attention: 6 queries over 11 padded memory positions.
  out.push_back({"cross", 2, 3, 8, 16, 6, 11, false, {}, {11, 7}});
  // Blocks over the small-block kernels' 256 (oneDNN).
  out.push_back({"cross_long", 2, 2, 8, 8, 5, 300, false, {}, {300, 123}});
  return out;
}

struct Precision {
  MatmulPrecision matmul;
  double tolerance;  // bf16: operands, probabilities and gradients rounded to 8 significant bits
};

class AttentionTest : public ::testing::TestWithParam<Precision> {};

TEST_P(AttentionTest, ForwardAndBackwardMatchTheFormula) {
  const Precision precision = GetParam();
  if (precision.matmul == MatmulPrecision::bf16 && !cpu::bf16_matmul_supported())
    GTEST_SKIP() << "this CPU has no AVX512-BF16";
  Backend& be = cpu_backend(precision.matmul);
  const bool bf16 = be.keeps_bf16_activations();
  for (Case c : cases()) {
    SCOPED_TRACE(c.name);
    const int H = c.heads, width_q = H * c.d_k, width_kv = H * (c.d_k + c.d_v);
    // Self: one buffer of rows [Q | K | V]; cross: queries [Q] and memory [K | V].
    const int ld_q = c.self ? width_q + width_kv : width_q, ld_kv = c.self ? ld_q : width_kv;
    std::vector<float> q_rows = random_values(static_cast<std::size_t>(c.batch) * c.queries * ld_q, 11, -2, 2);
    std::vector<float> kv_rows =
        c.self ? q_rows : random_values(static_cast<std::size_t>(c.batch) * c.keys * ld_kv, 12, -2, 2);
    // Under bf16 the backend reads bf16 operands: the reference reads the same rounded values.
    std::vector<Bf16> q16(q_rows.size()), kv16(kv_rows.size());
    for (std::size_t i = 0; i < q_rows.size(); ++i) q16[i] = testing::bf16_bits(q_rows[i]);
    for (std::size_t i = 0; i < kv_rows.size(); ++i) kv16[i] = testing::bf16_bits(kv_rows[i]);
    if (bf16) {
      for (auto& x : q_rows) x = static_cast<float>(testing::bf16_round(x));
      for (auto& x : kv_rows) x = static_cast<float>(testing::bf16_round(x));
    }
    const int k_offset = c.self ? width_q : 0, v_offset = k_offset + H * c.d_k;
    const std::vector<float> dctx = random_values(static_cast<std::size_t>(c.batch) * c.queries * H * c.d_v, 13, -1, 1);
    const Reference want = reference(c, {&q_rows, ld_q, 0, c.queries}, {&kv_rows, ld_kv, k_offset, c.keys},
                                     {&kv_rows, ld_kv, v_offset, c.keys}, dctx, ld_q, ld_kv);

    auto q_dev32 = testing::to_device(be, q_rows), kv_dev32 = testing::to_device(be, kv_rows);
    auto q_dev16 = testing::to_device(be, q16), kv_dev16 = testing::to_device(be, kv16);
    const void* q_data = bf16 ? static_cast<const void*>(q_dev16.data()) : q_dev32.data();
    const void* kv_data = bf16 ? static_cast<const void*>(kv_dev16.data()) : kv_dev32.data();
    auto view = [&](const void* rows, int ld, int offset, int length) {
      const nn::Activations first =
          bf16 ? nn::Activations(static_cast<const Bf16*>(rows)) : nn::Activations(static_cast<const float*>(rows));
      return nn::HeadsView{first.offset(offset), ld, static_cast<std::int64_t>(length) * ld};
    };
    const nn::HeadsView q = view(q_data, ld_q, 0, c.queries), k = view(kv_data, ld_kv, k_offset, c.keys),
                        v = view(kv_data, ld_kv, v_offset, c.keys);
    auto lengths = testing::to_device(be, c.key_lengths.empty() ? std::vector<std::int32_t>{0} : c.key_lengths);
    c.mask.key_lengths = c.key_lengths.empty() ? nullptr : lengths.data();
    const nn::AttentionShape shape{c.batch, H, c.d_k, c.d_v, c.queries, c.keys};

    // NaN everywhere first: every output element must be written.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto probs = testing::to_device(be, std::vector<float>(shape.probs_size(), nan));
    auto ctx = testing::to_device(be, std::vector<float>(want.ctx.size(), nan));
    nn::attention_forward(be, shape, q, k, v, c.mask, probs.data(), ctx.data());
    expect_close(testing::to_host(be, probs), want.probs, 2e-6, "probs");
    expect_close(testing::to_host(be, ctx), want.ctx, precision.tolerance, "ctx");

    // Gradients laid out like the operands; self-attention's three fill one buffer between them.
    auto dctx_dev = testing::to_device(be, dctx);
    auto dprobs = testing::to_device(be, std::vector<float>(shape.probs_size(), nan));
    auto dq = testing::to_device(be, std::vector<float>(want.dq.size(), nan));
    auto dkv = testing::to_device(be, std::vector<float>(want.dk.size(), nan));
    float* dkv_base = c.self ? dq.data() : dkv.data();
    nn::attention_backward(be, shape, q, k, v, probs.data(), dctx_dev.data(), dprobs.data(), dq.data(),
                           dkv_base + k_offset, dkv_base + v_offset);
    std::vector<double> want_dq = want.dq, want_dkv = want.dk;
    for (std::size_t i = 0; i < want_dkv.size(); ++i) want_dkv[i] += want.dv[i];
    if (c.self) {
      for (std::size_t i = 0; i < want_dq.size(); ++i) want_dq[i] += want_dkv[i];
    } else {
      expect_close(testing::to_host(be, dkv), want_dkv, precision.tolerance, "dk, dv");
    }
    expect_close(testing::to_host(be, dq), want_dq, precision.tolerance, c.self ? "dq, dk, dv" : "dq");
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, AttentionTest,
                         ::testing::Values(Precision{MatmulPrecision::fp32, 2e-6},
                                           Precision{MatmulPrecision::bf16, 2e-2}),
                         [](const ::testing::TestParamInfo<Precision>& info) { return to_string(info.param.matmul); });

}  // namespace
}  // namespace attn
