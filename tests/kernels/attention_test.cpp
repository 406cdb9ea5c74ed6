// Backend::attention and attention_backward (fused per sentence and head) against the path they
// replace: the batched products of Backend::matmul with cpu::attention_softmax and its backward in
// between (cpu/ops.h: the backends here are the CPU's), over shapes that reach every edge of the block kernels (one
// query, odd key counts and odd d_k, blocks of a single 8-row tile and of several, over 256 keys: the batched route),
// with padding, causal and window masks, in fp32 and in bf16 with the operands as training keeps them.
// (tests/nn/attention_test.cpp holds the same operations to a float64 reference of the formula.)
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "kernels/cpu/ops.h"

namespace attn {
namespace {

using testing::random_values;

struct Shape {
  int batch, heads, d_k, d_v, queries, keys;
  bool causal;
  int window;
  bool padded;
};

std::string str(const Shape& s) {
  return std::to_string(s.batch) + "x" + std::to_string(s.heads) + " q" + std::to_string(s.queries) + " k" +
         std::to_string(s.keys) + " d" + std::to_string(s.d_k) + "/" + std::to_string(s.d_v) +
         (s.causal ? " causal" : "") + (s.window ? " window " + std::to_string(s.window) : "") +
         (s.padded ? " padded" : "");
}

const Shape kShapes[] = {
    {32, 4, 64, 64, 32, 32, false, 0, true},  // the cpu-hour preset's self-attention
    {3, 2, 64, 64, 32, 32, true, 0, false},   // the decoder's
    {2, 3, 16, 8, 1, 1, false, 0, false},     // one query, one key
    {2, 2, 7, 5, 9, 13, false, 0, true},      // odd everything
    {2, 2, 17, 33, 17, 17, true, 3, false},   // restricted attention
    {1, 8, 64, 64, 40, 23, false, 0, true},   // cross-attention: more queries than keys
    {2, 1, 8, 8, 3, 300, false, 0, true},     // over 256 keys: the batched route
};

// Every element within tolerance·(1 + |want|), naming the first that is not.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i]))) << what << " element " << i;
}

class FusedAttention : public ::testing::TestWithParam<MatmulPrecision> {};

TEST_P(FusedAttention, MatchesTheBatchedProductsWithTheSoftmaxBetween) {
  const MatmulPrecision precision = GetParam();
  if (precision == MatmulPrecision::bf16 && !cpu::bf16_matmul_supported())
    GTEST_SKIP() << "this CPU has no AVX512-BF16: precision bf16 does not exist here";
  Backend& be = cpu_backend(precision);
  const bool bf16 = precision == MatmulPrecision::bf16;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(str(s));
    // Queries, keys and values side by side in rows [Q | K | V] (keys and values as long as the
    // queries' rows at max(queries, keys) rows per sentence), as self-attention keeps them.
    const int rows_per = std::max(s.queries, s.keys);
    const int ld = s.heads * (2 * s.d_k + s.d_v);
    const std::int64_t stride = static_cast<std::int64_t>(rows_per) * ld;
    const auto host = random_values(static_cast<std::size_t>(s.batch) * stride, 31, -2, 2);
    std::vector<Bf16> host16(host.size());
    cpu::to_bf16(host.data(), static_cast<std::int64_t>(host.size()), host16.data());
    auto rows32 = testing::to_device(be, host);
    auto rows16 = testing::to_device(be, host16);
    const MatrixRef rows = bf16 ? bf16_matrix(rows16.data(), ld) : f32_matrix(rows32.data(), ld);
    AttentionBlocks a;
    a.batch = s.batch, a.heads = s.heads, a.d_k = s.d_k, a.d_v = s.d_v, a.queries = s.queries, a.keys = s.keys;
    auto at = [&](std::int64_t offset) {
      MatrixRef x = rows;
      x.data = static_cast<const char*>(rows.data) + offset * static_cast<std::int64_t>(element_bytes(rows.dtype));
      return x;
    };
    a.q = rows, a.k = at(s.heads * s.d_k), a.v = at(2 * s.heads * s.d_k);
    a.q_stride = a.k_stride = a.v_stride = stride;
    std::vector<std::int32_t> lengths(s.batch, s.keys);
    if (s.padded)
      for (int b = 0; b < s.batch; ++b) lengths[b] = std::max(1, s.keys - 3 * b);
    auto lengths_dev = testing::to_device(be, lengths);
    const AttentionMask mask{lengths_dev.data(), s.causal, 0, s.window};

    // The path before the fused kernel: batched products, the softmax between them.
    const std::int64_t block = static_cast<std::int64_t>(s.queries) * s.keys;
    const int ld_ctx = s.heads * s.d_v;
    const std::size_t ctx_size = static_cast<std::size_t>(s.batch) * s.queries * ld_ctx;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto want_probs = testing::to_device(be, std::vector<float>(a.probs_size(), nan));
    auto want_ctx = testing::to_device(be, std::vector<float>(ctx_size, nan));
    MatrixRef kt = a.k;
    kt.trans = Trans::Yes;
    const GemmBatch scores{s.batch, s.heads, stride, s.d_k, stride, s.d_k, s.heads * block, block};
    be.matmul(s.queries, s.keys, s.d_k, 1.0f, a.q, kt, 0.0f, want_probs.data(), s.keys, &scores);
    cpu::attention_softmax(want_probs.data(), s.batch, s.heads, s.queries, s.keys, mask,
                           1.0f / std::sqrt(static_cast<float>(s.d_k)));
    const GemmBatch context{
        s.batch, s.heads, s.heads * block, block, stride, s.d_v, static_cast<std::int64_t>(s.queries) * ld_ctx, s.d_v};
    be.matmul(s.queries, s.d_v, s.keys, 1.0f, f32_matrix(want_probs.data(), s.keys), a.v, 0.0f, want_ctx.data(), ld_ctx,
              &context);

    // NaN first everywhere: every element must be written.
    auto probs = testing::to_device(be, std::vector<float>(a.probs_size(), nan));
    auto ctx = testing::to_device(be, std::vector<float>(ctx_size, nan));
    be.attention(a, mask, probs.data(), ctx.data(), nullptr);
    // The same block kernels and softmax rows: the same values (float32 rounding apart where the
    // batched route takes another kernel for a few rows).
    expect_close(testing::to_host(be, probs), testing::to_host(be, want_probs), 1e-6, "probs");
    expect_close(testing::to_host(be, ctx), testing::to_host(be, want_ctx), 1e-6, "ctx");

    // Backward: ∂q, ∂k, ∂v laid out like the operands (one buffer of rows [dQ | dK | dV]).
    const auto dctx = random_values(ctx_size, 32, -1, 1);
    auto dctx_dev = testing::to_device(be, dctx);
    auto want_d = testing::to_device(be, std::vector<float>(host.size(), 0.0f));
    auto want_ds = testing::to_device(be, std::vector<float>(a.probs_size(), nan));
    {
      float* dq = want_d.data();
      float* dk = dq + s.heads * s.d_k;
      float* dv = dk + s.heads * s.d_k;
      const auto f32 = [](const float* x, std::int64_t l, Trans t = Trans::No) { return f32_matrix(x, l, t); };
      const std::int64_t ctx_stride = static_cast<std::int64_t>(s.queries) * ld_ctx;
      GemmBatch g{s.batch, s.heads, s.heads * block, block, ctx_stride, s.d_v, stride, s.d_v};
      be.matmul(s.keys, s.d_v, s.queries, 1.0f, f32(want_probs.data(), s.keys, Trans::Yes),
                f32(dctx_dev.data(), ld_ctx), 0.0f, dv, ld, &g);
      MatrixRef vt = a.v;
      vt.trans = Trans::Yes;
      g = GemmBatch{s.batch, s.heads, ctx_stride, s.d_v, stride, s.d_v, s.heads * block, block};
      be.matmul(s.queries, s.keys, s.d_v, 1.0f, f32(dctx_dev.data(), ld_ctx), vt, 0.0f, want_ds.data(), s.keys, &g);
      cpu::attention_softmax_backward(want_ds.data(), want_probs.data(), a.probs_size() / std::max(s.keys, 1), s.keys,
                                      1.0f / std::sqrt(static_cast<float>(s.d_k)));
      g = GemmBatch{s.batch, s.heads, s.heads * block, block, stride, s.d_k, stride, s.d_k};
      be.matmul(s.queries, s.d_k, s.keys, 1.0f, f32(want_ds.data(), s.keys), a.k, 0.0f, dq, ld, &g);
      be.matmul(s.keys, s.d_k, s.queries, 1.0f, f32(want_ds.data(), s.keys, Trans::Yes), a.q, 0.0f, dk, ld, &g);
    }
    auto d = testing::to_device(be, std::vector<float>(host.size(), 0.0f));
    auto ds = testing::to_device(be, std::vector<float>(a.probs_size(), nan));
    be.attention_backward(a, probs.data(), dctx_dev.data(), ds.data(), d.data(), d.data() + s.heads * s.d_k,
                          d.data() + 2 * s.heads * s.d_k, nullptr);
    expect_close(testing::to_host(be, d), testing::to_host(be, want_d), 1e-5, "dq, dk, dv");
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, FusedAttention, ::testing::Values(MatmulPrecision::fp32, MatmulPrecision::bf16),
                         [](const ::testing::TestParamInfo<MatmulPrecision>& info) { return to_string(info.param); });

}  // namespace
}  // namespace attn
