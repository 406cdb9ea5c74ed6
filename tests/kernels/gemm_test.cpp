// Matrix products against a naive double-precision triple loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "common/backends.h"
#include "common/device_vector.h"

namespace attn {
namespace {

using testing::random_values;

// C = alpha · op(A) op(B) + beta · C, row-major, computed in double.
void reference_gemm(bool ta, bool tb, int m, int n, int k, float alpha, const std::vector<float>& a, int lda,
                    const std::vector<float>& b, int ldb, float beta, std::vector<float>& c, int ldc,
                    std::size_t a_off = 0, std::size_t b_off = 0, std::size_t c_off = 0) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        const double av = ta ? a[a_off + p * lda + i] : a[a_off + i * lda + p];
        const double bv = tb ? b[b_off + j * ldb + p] : b[b_off + p * ldb + j];
        acc += av * bv;
      }
      float& cv = c[c_off + i * ldc + j];
      cv = static_cast<float>(alpha * acc + beta * cv);
    }
}

// The tolerance of a product of inputs in [-1, 1] (|a·b| <= 1): fp32 for float32 sums, plus, on a
// backend of precision bf16 (float inputs rounded to bfloat16, 2^-8 relatively each), |alpha|·k·
// (2·2^-8 + 2^-16) for the k rounded products of each element.
double tolerance(Backend& be, int k, float alpha, double fp32) {
  return fp32 + (be.keeps_bf16_activations() ? std::abs(alpha) * k * (0x1p-7 + 0x1p-16) : 0.0);
}

class GemmTest : public ::testing::TestWithParam<Backend*> {};

TEST_P(GemmTest, AllTransposesWithLeadingDimensionsAndBeta) {
  Backend& be = *GetParam();
  const int m = 37, n = 29, k = 45;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 5, ldc = n + 2;
      auto a = random_values(static_cast<std::size_t>(ta ? k : m) * lda, 1);
      auto b = random_values(static_cast<std::size_t>(tb ? n : k) * ldb, 2);
      auto c = random_values(static_cast<std::size_t>(m) * ldc, 3);
      auto expected = c;
      reference_gemm(ta, tb, m, n, k, 0.5f, a, lda, b, ldb, 0.25f, expected, ldc);
      auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
      be.matmul(m, n, k, 0.5f, f32_matrix(da.data(), lda, Trans{ta}), f32_matrix(db.data(), ldb, Trans{tb}), 0.25f,
                dc.data(), ldc, nullptr);
      auto got = testing::to_host(be, dc);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
          ASSERT_NEAR(got[i * ldc + j], expected[i * ldc + j], tolerance(be, k, 0.5f, 1e-5))
              << "ta=" << ta << " tb=" << tb;
      // The padding between rows of C is never written.
      for (int i = 0; i < m; ++i)
        for (int j = n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], c[i * ldc + j]);
    }
}

// x·Wᵀ (NT) with strided operands, against the reference; C's padding must stay untouched.
void expect_rows_times_weights(Backend& be, int m, int n, int k, float beta, unsigned seed, double fp32_tolerance) {
  const int lda = k + 3, ldb = k + 1, ldc = n + 2;
  auto a = random_values(static_cast<std::size_t>(m) * lda, seed);
  auto b = random_values(static_cast<std::size_t>(n) * ldb, seed + 1);
  auto c = random_values(static_cast<std::size_t>(m) * ldc, seed + 2);
  auto expected = c;
  reference_gemm(false, true, m, n, k, 0.75f, a, lda, b, ldb, beta, expected, ldc);
  auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
  be.matmul(m, n, k, 0.75f, f32_matrix(da.data(), lda), f32_matrix(db.data(), ldb, Trans::Yes), beta, dc.data(), ldc,
            nullptr);
  auto got = testing::to_host(be, dc);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j)
      ASSERT_NEAR(got[i * ldc + j], expected[i * ldc + j], tolerance(be, k, 0.75f, fp32_tolerance)) << m << " " << beta;
    for (int j = n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], c[i * ldc + j]);
  }
}

TEST_P(GemmTest, FewRowsThroughAWideLayer) {
  // A decoding step's shape: a few rows through a wide layer.
  for (int m : {16, 32, 100})
    for (float beta : {0.0f, 0.5f}) expect_rows_times_weights(*GetParam(), m, 520, 33, beta, 9, 1e-5);
  // A decoding step's rows through each of the small preset's layers, 16-256 rows (oneDNN's matmul
  // where it has its brgemm kernel), and through an empty inner dimension (C = beta·C).
  for (int m : {17, 128, 256})
    for (float beta : {0.0f, 0.5f}) expect_rows_times_weights(*GetParam(), m, 256, 1024, beta, 10, 1e-4);
  for (float beta : {0.0f, 0.5f}) expect_rows_times_weights(*GetParam(), 32, 40, 0, beta, 11, 0);
}

TEST_P(GemmTest, ManyRowsIntoANarrowLayer) {
  // Many rows, k >= n: a feed-forward network's second product.
  for (float beta : {0.0f, 0.5f}) expect_rows_times_weights(*GetParam(), 1030, 130, 260, beta, 12, 1e-4);
}

TEST_P(GemmTest, HandWorkedProduct) {
  Backend& be = *GetParam();
  // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]
  auto a = testing::to_device(be, std::vector<float>{1, 2, 3, 4});
  auto b = testing::to_device(be, std::vector<float>{5, 6, 7, 8});
  auto c = testing::to_device(be, std::vector<float>(4, 0));
  be.matmul(2, 2, 2, 1, f32_matrix(a.data(), 2), f32_matrix(b.data(), 2), 0, c.data(), 2, nullptr);
  EXPECT_EQ(testing::to_host(be, c), (std::vector<float>{19, 22, 43, 50}));
}

TEST_P(GemmTest, TwoLevelBatchLikeAttentionHeads) {
  Backend& be = *GetParam();
  // Q·Kᵀ per (sentence, head) on [B, T, H·dk] rows, as multi-head attention lays them out: dense
  // rows and rows inside a fused [B, T, 3·H·dk] QKV matrix.
  const int B = 3, H = 4, T = 7, dk = 5;
  for (int ld : {H * dk, 3 * H * dk}) {
    auto q = random_values(static_cast<std::size_t>(B) * T * ld, 4);
    auto kk = random_values(static_cast<std::size_t>(B) * T * ld, 5);
    const auto c = random_values(static_cast<std::size_t>(B) * H * T * T, 6);
    auto expected = c;
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        reference_gemm(false, true, T, T, dk, 0.5f, q, ld, kk, ld, 0.25f, expected, T, b * T * ld + h * dk,
                       b * T * ld + h * dk, (b * H + h) * T * T);
    auto dq = testing::to_device(be, q), dkk = testing::to_device(be, kk), dc = testing::to_device(be, c);
    GemmBatch batch{B, H, T * ld, dk, T * ld, dk, H * T * T, T * T};
    be.matmul(T, T, dk, 0.5f, f32_matrix(dq.data(), ld), f32_matrix(dkk.data(), ld, Trans::Yes), 0.25f, dc.data(), T,
              &batch);
    auto got = testing::to_host(be, dc);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], expected[i], tolerance(be, dk, 0.5f, 1e-5)) << "ld=" << ld << " at " << i;
  }
}

TEST_P(GemmTest, BatchedDecodingShapesAllTransposes) {
  // One decoding step: one to four query rows per (hypothesis, head), every transpose, beta.
  Backend& be = *GetParam();
  const int outer = 3, inner = 2, n = 9, k = 6;
  for (int m : {1, 2, 4, 5})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const int lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 3;
        const std::int64_t sa = static_cast<std::int64_t>(ta ? k : m) * lda,
                           sb = static_cast<std::int64_t>(tb ? n : k) * ldb, sc = static_cast<std::int64_t>(m) * ldc;
        const int count = outer * inner;
        auto a = random_values(static_cast<std::size_t>(sa * count), 6);
        auto b = random_values(static_cast<std::size_t>(sb * count), 7);
        auto c = random_values(static_cast<std::size_t>(sc * count), 8);
        auto expected = c;
        for (int i = 0; i < count; ++i)
          reference_gemm(ta, tb, m, n, k, 0.5f, a, lda, b, ldb, 0.25f, expected, ldc, i * sa, i * sb, i * sc);
        auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
        const GemmBatch batch{outer, inner, inner * sa, sa, inner * sb, sb, inner * sc, sc};
        be.matmul(m, n, k, 0.5f, f32_matrix(da.data(), lda, Trans{ta}), f32_matrix(db.data(), ldb, Trans{tb}), 0.25f,
                  dc.data(), ldc, &batch);
        auto got = testing::to_host(be, dc);
        for (std::size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], expected[i], tolerance(be, k, 0.5f, 1e-5))
              << "m=" << m << " ta=" << ta << " tb=" << tb << " at " << i;
      }
}

TEST_P(GemmTest, BatchedBlocksAllTransposesWithRaggedEdges) {
  // Attention-sized blocks whose sides are not multiples of the kernels' tiles (8 rows, 16 and 32
  // columns), every transpose, with beta, and with beta = 0 over NaN (C must not be read then);
  // one side over 256 takes the other route.
  Backend& be = *GetParam();
  const int outer = 2, inner = 3;
  struct Dims {
    int m, n, k;
  };
  for (Dims d : {Dims{5, 7, 3}, Dims{9, 16, 64}, Dims{37, 33, 20}, Dims{17, 40, 1}, Dims{8, 260, 6}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.25f, 0.0f}) {
          const int m = d.m, n = d.n, k = d.k;
          const int lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 3;
          const std::int64_t sa = static_cast<std::int64_t>(ta ? k : m) * lda,
                             sb = static_cast<std::int64_t>(tb ? n : k) * ldb, sc = static_cast<std::int64_t>(m) * ldc;
          const int count = outer * inner;
          auto a = random_values(static_cast<std::size_t>(sa * count), 16);
          auto b = random_values(static_cast<std::size_t>(sb * count), 17);
          auto c = random_values(static_cast<std::size_t>(sc * count), 18);
          if (beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
          auto expected = c;
          if (beta == 0.0f) std::fill(expected.begin(), expected.end(), 0.0f);
          for (int i = 0; i < count; ++i)
            reference_gemm(ta, tb, m, n, k, 0.5f, a, lda, b, ldb, beta, expected, ldc, i * sa, i * sb, i * sc);
          auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
          const GemmBatch batch{outer, inner, inner * sa, sa, inner * sb, sb, inner * sc, sc};
          be.matmul(m, n, k, 0.5f, f32_matrix(da.data(), lda, Trans{ta}), f32_matrix(db.data(), ldb, Trans{tb}), beta,
                    dc.data(), ldc, &batch);
          auto got = testing::to_host(be, dc);
          for (int i = 0; i < count; ++i)
            for (int r = 0; r < m; ++r)
              for (int j = 0; j < n; ++j) {
                const std::size_t at = i * sc + static_cast<std::size_t>(r) * ldc + j;
                ASSERT_NEAR(got[at], expected[at], tolerance(be, k, 0.5f, 1e-5))
                    << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb << " beta=" << beta;
              }
        }
}

INSTANTIATE_TEST_SUITE_P(Backends, GemmTest, ::testing::ValuesIn(testing::all_backends()), testing::backend_name);

}  // namespace
}  // namespace attn
