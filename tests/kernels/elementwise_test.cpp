// Element-wise kernels, dropout and embeddings against hand-worked values and naive loops (Adam and
// topk against their references: backend_ops_test.cpp, which covers every op).
#include <omp.h>

#include <cmath>

#include <gtest/gtest.h>

#include "common/backends.h"
#include "common/device_vector.h"
#include "kernels/cpu/fast_exp.h"

namespace attn {
namespace {

using testing::random_values;

class ElementwiseTest : public ::testing::TestWithParam<Backend*> {};

TEST_P(ElementwiseTest, BiasReluAndTheirGradients) {
  Backend& be = *GetParam();
  auto x = testing::to_device(be, std::vector<float>{-1, 2, 0.5f, -3, 1, -0.25f});
  auto bias = testing::to_device(be, std::vector<float>{0.5f, -1, 0});
  be.add_bias_relu(x.data(), bias.data(), 2, 3, nullptr);
  EXPECT_EQ(testing::to_host(be, x), (std::vector<float>{0, 1, 0.5f, 0, 0, 0}));
  auto dy = testing::to_device(be, std::vector<float>{1, 2, 3, 4, 5, 6});
  be.relu_backward(dy.data(), x.data(), DType::f32, 6);
  EXPECT_EQ(testing::to_host(be, dy), (std::vector<float>{0, 2, 3, 0, 0, 0}));
  auto db = testing::to_device(be, std::vector<float>{10, 10, 10});
  auto g = testing::to_device(be, std::vector<float>{1, 2, 3, 4, 5, 6});
  be.bias_grad(g.data(), 2, 3, db.data(), nullptr, DType::f32, nullptr, DType::f32);
  EXPECT_EQ(testing::to_host(be, db), (std::vector<float>{15, 17, 19}));
}

TEST_P(ElementwiseTest, SumOfSquaresIsTheSameOnAnyThreadCount) {
  Backend& be = *GetParam();
  auto v = random_values(1 << 20, 51);
  double naive = 0;
  for (float x : v) naive += static_cast<double>(x) * x;
  auto d = testing::to_device(be, v);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = be.sum_squares(d.data(), static_cast<std::int64_t>(v.size()));
  omp_set_num_threads(std::max(2, threads));
  const double many = be.sum_squares(d.data(), static_cast<std::int64_t>(v.size()));
  omp_set_num_threads(threads);
  EXPECT_EQ(one, many);
  EXPECT_NEAR(one, naive, 1e-9 * naive);
}

TEST_P(ElementwiseTest, DropoutKeepsTheRightFractionAndRepeatsItsMask) {
  Backend& be = *GetParam();
  const std::int64_t n = 1 << 20;
  const float p = 0.1f;
  auto ones = testing::to_device(be, std::vector<float>(n, 1.0f));
  DeviceBuffer<float> a(be, n), b(be, n), c(be, n);
  be.dropout(ones.data(), a.data(), n, p, 1234);
  be.dropout(ones.data(), b.data(), n, p, 1234);
  be.dropout(ones.data(), c.data(), n, p, 1235);
  auto ha = testing::to_host(be, a), hb = testing::to_host(be, b), hc = testing::to_host(be, c);
  EXPECT_EQ(ha, hb) << "the same seed must give the same mask (the backward pass relies on it)";
  EXPECT_NE(ha, hc);
  std::int64_t dropped = 0;
  for (float v : ha) {
    if (v == 0.0f)
      ++dropped;
    else
      ASSERT_FLOAT_EQ(v, 1.0f / 0.9f);
  }
  // Binomial(n, 0.1): standard deviation sqrt(n·0.09) ≈ 307; allow 5σ.
  EXPECT_NEAR(static_cast<double>(dropped), 0.1 * n, 5 * std::sqrt(n * 0.09));
  // Neighbouring elements are independent: P(both dropped) ≈ p².
  std::int64_t both = 0;
  for (std::int64_t i = 0; i + 1 < n; i += 2) both += ha[i] == 0 && ha[i + 1] == 0;
  EXPECT_NEAR(static_cast<double>(both), 0.01 * n / 2, 5 * std::sqrt(n / 2 * 0.0099));
}

TEST_P(ElementwiseTest, EmbeddingLookupAndScatterAddGradient) {
  Backend& be = *GetParam();
  const int dim = 2;
  auto table = testing::to_device(be, std::vector<float>{0, 1, 10, 11, 20, 21});
  auto positions = testing::to_device(be, std::vector<float>{0.5f, 0.25f, 1, 2});
  auto ids = testing::to_device(be, std::vector<std::int32_t>{2, 1, 2, 2});  // 2 sentences × 2
  DeviceBuffer<float> out(be, 8);
  be.embedding(ids.data(), 4, f32_matrix(table.data(), dim), dim, 2.0f, positions.data(), 2, out.data());
  EXPECT_EQ(testing::to_host(be, out), (std::vector<float>{40.5f, 42.25f, 21, 24, 40.5f, 42.25f, 41, 44}));
  auto dout = testing::to_device(be, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  auto dtable = testing::to_device(be, std::vector<float>(6, 0.0f));
  be.embedding_backward(ids.data(), 4, dout.data(), dim, 2.0f, dtable.data());
  // id 2 appears in rows 0, 2, 3: 2·(1+5+7, 2+6+8); id 1 in row 1: 2·(3, 4)
  EXPECT_EQ(testing::to_host(be, dtable), (std::vector<float>{0, 0, 6, 8, 26, 32}));
  auto dpos = testing::to_device(be, std::vector<float>(4, 0.0f));
  be.positions_backward(dout.data(), 2, 2, dim, dpos.data());
  EXPECT_EQ(testing::to_host(be, dpos), (std::vector<float>{6, 8, 10, 12}));
}

INSTANTIATE_TEST_SUITE_P(Backends, ElementwiseTest, ::testing::ValuesIn(testing::all_backends()),
                         testing::backend_name);

TEST(FastExp, RelativeErrorBelowTwoUlpOverTheUsefulRange) {
  double worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.001f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(cpu::fast_exp(x) - want) / want);
  }
  EXPECT_LT(worst, 2.5e-7);
  EXPECT_EQ(cpu::fast_exp(-1000.0f), 0.0f);
  EXPECT_EQ(cpu::fast_exp(0.0f), 1.0f);
}

#if defined(__AVX512F__)
// Sixteen at a time: the same bound, and the ends and NaN as the scalar form has them.
TEST(FastExp, SixteenLanesAtOnceKeepTheBoundAndTheEnds) {
  double worst = 0;
  alignas(64) float x[16], y[16];
  for (float start = -87.0f; start < 88.0f; start += 16 * 0.001f) {
    for (int i = 0; i < 16; ++i) x[i] = start + 0.001f * static_cast<float>(i);
    _mm512_store_ps(y, cpu::fast_exp(_mm512_load_ps(x)));
    for (int i = 0; i < 16; ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      worst = std::max(worst, std::abs(y[i] - want) / want);
    }
  }
  EXPECT_LT(worst, 2.5e-7);
  const float special[16] = {-1000.0f, 0.0f, std::nanf(""), -INFINITY, 1000.0f, -87.3f, 1.0f, -1.0f,
                             0.0f,     0.0f, 0.0f,          0.0f,      0.0f,    0.0f,   0.0f, 0.0f};
  _mm512_storeu_ps(y, cpu::fast_exp(_mm512_loadu_ps(special)));
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], cpu::fast_exp(1000.0f));  // clamped at 88.6 like the scalar form
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_NEAR(y[6], std::exp(1.0), 2.5e-7 * std::exp(1.0));
  EXPECT_NEAR(y[7], std::exp(-1.0), 2.5e-7 * std::exp(-1.0));
}
#endif

}  // namespace
}  // namespace attn

namespace attn {
namespace {

class SelectTest : public ::testing::TestWithParam<Backend*> {};

TEST_P(SelectTest, GatherRowsWithStridesAndIndices) {
  Backend& be = *GetParam();
  // Source: 3 rows of stride 4; gather the first 2 floats of rows 2, 0, 2 into rows of stride 3.
  auto src = testing::to_device(be, std::vector<float>{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  auto idx = testing::to_device(be, std::vector<std::int32_t>{2, 0, 2});
  auto dst = testing::to_device(be, std::vector<float>(9, -1.0f));
  be.gather_rows(src.data(), 4, idx.data(), 3, 2, dst.data(), 3);
  EXPECT_EQ(testing::to_host(be, dst), (std::vector<float>{20, 21, -1, 0, 1, -1, 20, 21, -1}));
  be.gather_rows(src.data() + 1, 4, nullptr, 2, 1, dst.data() + 2, 3);
  EXPECT_EQ(testing::to_host(be, dst), (std::vector<float>{20, 21, 1, 0, 1, 11, 20, 21, -1}));
}

INSTANTIATE_TEST_SUITE_P(Backends, SelectTest, ::testing::ValuesIn(testing::all_backends()), testing::backend_name);

}  // namespace
}  // namespace attn
