// int8 quantization and the int8 product: hand-worked examples, the integer sums recomputed
// exactly from the documented rules, and the product against double precision within the bound
// that quantization itself implies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "common/backends.h"
#include "common/device_vector.h"
#include "kernels/cpu/quantize.h"

namespace attn {
namespace {

using testing::random_values;

class QuantizeTest : public ::testing::TestWithParam<Backend*> {};

struct Quantized {
  std::vector<std::int8_t> q;
  std::vector<float> scales;
  std::vector<std::int32_t> sums;
};

Quantized quantize(Backend& be, const std::vector<float>& x, std::int64_t rows, int cols) {
  auto dx = testing::to_device(be, x);
  DeviceBuffer<std::int8_t> q(be, x.size());
  DeviceBuffer<float> scales(be, static_cast<std::size_t>(rows));
  DeviceBuffer<std::int32_t> sums(be, static_cast<std::size_t>(rows));
  be.quantize_rows(dx.data(), rows, cols, cols, q.data(), scales.data(), sums.data());
  return {testing::to_host(be, q), testing::to_host(be, scales), testing::to_host(be, sums)};
}

TEST_P(QuantizeTest, WeightRowsByHand) {
  Backend& be = *GetParam();
  // Row 0: max |x| = 2.54, scale 0.02: 127, -50, 15, 0.
  // Row 1: scale 0.01: 1.27 -> 127, 0.126 -> 12.6 -> 13, -0.014 -> -1.4 -> -1, 0.006 -> 0.6 -> 1.
  // Row 2: the largest magnitude negative: -3.81 -> -127 (never -128), 1 -> 33.3 -> 33.
  // Row 3: all zero: scale 1 (not 0, which would make every later division infinite).
  const std::vector<float> x = {2.54f,  -1.0f,  0.3f,    0.0f,    //
                                1.27f,  0.126f, -0.014f, 0.006f,  //
                                -3.81f, 1.0f,   0.0f,    0.0f,    //
                                0.0f,   0.0f,   0.0f,    0.0f};
  const Quantized r = quantize(be, x, 4, 4);
  EXPECT_EQ(r.q, (std::vector<std::int8_t>{127, -50, 15, 0, 127, 13, -1, 1, -127, 33, 0, 0, 0, 0, 0, 0}));
  EXPECT_FLOAT_EQ(r.scales[0], 0.02f);
  EXPECT_FLOAT_EQ(r.scales[1], 0.01f);
  EXPECT_FLOAT_EQ(r.scales[2], 0.03f);
  EXPECT_EQ(r.scales[3], 1.0f);
  EXPECT_EQ(r.sums, (std::vector<std::int32_t>{92, 140, -94, 0}));
  // The round trip: scale · q is within half a step of x, and exact at the extremes.
  for (int i = 0; i < 16; ++i) {
    const float back = r.scales[i / 4] * r.q[i];
    EXPECT_LE(std::fabs(back - x[i]), 0.5f * r.scales[i / 4] * 1.0001f) << i;
  }
  EXPECT_NEAR(r.scales[0] * 127, 2.54f, 1e-6f);
  EXPECT_NEAR(r.scales[2] * -127, -3.81f, 1e-6f);
}

TEST(QuantizeActivations, SevenBitRowsByHand) {
  // Row 0: lo -1, hi 2: scale 3/127, zero point round(42.33) = 42; x·(127/3) rounds to -42, 0,
  //        85, 21, plus 42.
  // Row 1: all >= 0: lo is 0, so the zero point is 0 and the row uses all 128 levels.
  // Row 2: all <= 0: hi is 0, zero point 127: -1.27 -> 0, -0.6 -> 67.
  // Row 3: all zero: scale 1, every q equals the zero point 0.
  // Row 4: saturation: lo -1, hi 1, 1/scale = 63.5 exactly, zero point round(63.5) = 64; 1 lands on
  //        64 + 64 = 128 and is clamped to 127; -1 on -64 + 64 = 0; 0.5 on 31.75 -> 32 + 64.
  const std::vector<float> x = {-1.0f,  0.0f,  2.0f,   0.5f,    //
                                0.0f,   1.27f, 0.637f, 0.2f,    //
                                -1.27f, -0.6f, 0.0f,   -0.01f,  //
                                0.0f,   0.0f,  0.0f,   0.0f,    //
                                -1.0f,  1.0f,  0.0f,   0.5f};
  std::vector<std::uint8_t> q(20);
  std::vector<float> scales(5);
  std::vector<std::int32_t> zeros(5);
  cpu::quantize_activation_rows(x.data(), 5, 4, 4, 127, q.data(), scales.data(), zeros.data());
  EXPECT_EQ(q,
            (std::vector<std::uint8_t>{0, 42, 127, 63, 0, 127, 64, 20, 0, 67, 127, 126, 0, 0, 0, 0, 0, 127, 64, 96}));
  EXPECT_EQ(zeros, (std::vector<std::int32_t>{42, 0, 127, 0, 64}));
  EXPECT_FLOAT_EQ(scales[0], 3.0f / 127);
  EXPECT_FLOAT_EQ(scales[1], 0.01f);
  EXPECT_FLOAT_EQ(scales[2], 0.01f);
  EXPECT_EQ(scales[3], 1.0f);
  // No level beyond 127: the products' 16-bit pair sums cannot saturate (quantize.h).
  for (auto v : q) EXPECT_LE(v, 127);
}

TEST(QuantizeActivations, EightBitRowsByHand) {
  // Row 0: lo -1, hi 2: scale 3/255, zero point 85; x·85 is -85, 0, 170 and 42.5 (to even: 42),
  //        plus 85.
  // Row 1: saturation: lo = -hi = -127.5/128, scale 1/128 exactly, zero point round(127.5) = 128;
  //        hi·128 = 127.5 goes to even 128 and lands on 256, clamped to 255; lo on -128 + 128 = 0;
  //        0.5 on 64 + 128.
  // Row 2: all >= 0: zero point 0, 2.55 at the top level 255, scale 0.01: 0.004 -> 0, 1.005 -> 100.5
  //        (float: 100.49999) -> 100.
  const std::vector<float> x = {-1.0f,        0.0f,        2.0f,   0.5f,  //
                                -0.99609375f, 0.99609375f, 0.0f,   0.5f,  //
                                2.55f,        0.004f,      1.005f, 0.0f};
  std::vector<std::uint8_t> q(12);
  std::vector<float> scales(3);
  std::vector<std::int32_t> zeros(3);
  cpu::quantize_activation_rows(x.data(), 3, 4, 4, 255, q.data(), scales.data(), zeros.data());
  EXPECT_EQ(q, (std::vector<std::uint8_t>{0, 85, 255, 127, 0, 255, 128, 192, 255, 0, 100, 0}));
  EXPECT_EQ(zeros, (std::vector<std::int32_t>{85, 128, 0}));
  EXPECT_FLOAT_EQ(scales[0], 3.0f / 255);
  EXPECT_FLOAT_EQ(scales[2], 0.01f);
}

TEST(QuantizeActivations, LongRowsFollowTheRuleInEveryLane) {
  // Rows of 16, 37 (two blocks of 16 and a part) and 53 columns inside a wider leading dimension,
  // the extremes placed in a whole block's last lane and in the part after the blocks, against
  // quantize.h's rule written out here: lo = min(0, x), hi = max(0, x), scale = (hi - lo) / levels,
  // zero point round(-lo / scale) in [0, levels], q = clamp(nearbyint(x / scale) + zero, 0, levels).
  const int ld = 60;
  for (const int levels : {127, 255})
    for (const int cols : {16, 37, 53}) {
      SCOPED_TRACE("levels " + std::to_string(levels) + ", columns " + std::to_string(cols));
      const int rows = 3;
      std::vector<float> x(static_cast<std::size_t>(rows) * ld, 1e9f);  // beyond each row: never read
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) x[r * ld + c] = 0.37f * std::sin(1.7f * c + r) + 0.05f * r;
      x[0 * ld + 15] = -3.0f;       // a whole block's last lane
      x[1 * ld + cols - 1] = 4.5f;  // the last column
      x[2 * ld + cols - 1] = -2.25f;
      x[2 * ld + 7] = 1.75f;
      std::vector<std::uint8_t> q(static_cast<std::size_t>(rows) * cols);
      std::vector<float> scales(rows);
      std::vector<std::int32_t> zeros(rows);
      cpu::quantize_activation_rows(x.data(), rows, cols, ld, levels, q.data(), scales.data(), zeros.data());
      const float top = static_cast<float>(levels);
      for (int r = 0; r < rows; ++r) {
        float lo = 0, hi = 0;
        for (int c = 0; c < cols; ++c) lo = std::min(lo, x[r * ld + c]), hi = std::max(hi, x[r * ld + c]);
        const float scale = (hi - lo) / top, inverse = 1.0f / scale;
        const float zero = std::clamp(std::round(-lo * inverse), 0.0f, top);
        EXPECT_FLOAT_EQ(scales[r], scale) << "row " << r;
        EXPECT_EQ(zeros[r], static_cast<std::int32_t>(zero)) << "row " << r;
        for (int c = 0; c < cols; ++c)
          EXPECT_EQ(q[r * cols + c],
                    static_cast<std::uint8_t>(std::clamp(std::nearbyint(x[r * ld + c] * inverse) + zero, 0.0f, top)))
              << "row " << r << ", column " << c;
      }
    }
}

TEST(QuantizeActivations, EightBitsOnlyWhereOneDnnHasVnni) {
  // The CPU's flags, read here independently of oneDNN: 8-bit activations need AVX512-VNNI, and
  // oneDNN allowed to use it: ONEDNN_MAX_CPU_ISA below AVX512_CORE_VNNI (as CTest's
  // Int8SevenBitActivations sets it, to run the 7-bit path on a VNNI machine) forbids it.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  const bool vnni = text.find(" avx512_vnni") != std::string::npos;
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::set<std::string> below_vnni{"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE"};
  const bool capped = cap && below_vnni.count(cap);
  EXPECT_EQ(cpu::activation_levels(), vnni && !capped ? 255 : 127) << "ONEDNN_MAX_CPU_ISA=" << (cap ? cap : "");
}

// The product's exact value from the documented rules: activations quantized as quantize.h
// states (recomputed here in double), integer sums, then the scales.
double dequantized_product(const float* x, int k, const std::int8_t* w, float w_scale) {
  double lo = 0, hi = 0;
  for (int c = 0; c < k; ++c) lo = std::min<double>(lo, x[c]), hi = std::max<double>(hi, x[c]);
  const int levels = cpu::activation_levels();
  const float scale = hi > lo ? static_cast<float>(hi - lo) / static_cast<float>(levels) : 1.0f;
  const float inverse = 1.0f / scale;
  const double zero = std::round(-static_cast<float>(lo) * inverse);
  std::int64_t sum = 0;
  for (int c = 0; c < k; ++c) {
    const double q = std::clamp(std::nearbyint(x[c] * inverse) + zero, 0.0, static_cast<double>(levels));
    sum += static_cast<std::int64_t>(q - zero) * w[c];
  }
  return static_cast<double>(scale) * w_scale * static_cast<double>(sum);
}

TEST_P(QuantizeTest, ProductAgainstDoubleWithinTheQuantizationBound) {
  Backend& be = *GetParam();
  struct Shape {
    int m, n, k;
  };
  // One to four rows take gemm_s8's own VNNI kernel (16 / m weight rows at a time, 64 columns):
  // weight rows left over and a part of 64 columns at the end; on two threads from 65536
  // multiply-adds (4 × 70 × 300, 1 × 301 × 256).
  for (const Shape s : {Shape{1, 40, 64}, Shape{2, 17, 1000}, Shape{3, 29, 65}, Shape{4, 21, 300}, Shape{4, 70, 300},
                        Shape{1, 301, 256}, Shape{5, 16, 256}, Shape{6, 7, 63}, Shape{7, 33, 100}, Shape{8, 19, 130},
                        Shape{9, 11, 70}, Shape{32, 300, 512}, Shape{128, 64, 2048}}) {
    const auto x = random_values(static_cast<std::size_t>(s.m) * s.k, 5 + s.k, -2.0f, 3.0f);
    const auto w = random_values(static_cast<std::size_t>(s.n) * s.k, 9 + s.n, -0.5f, 0.5f);
    const Quantized qw = quantize(be, w, s.n, s.k);
    auto dx = testing::to_device(be, x);
    auto dq = testing::to_device(be, qw.q);
    auto ds = testing::to_device(be, qw.scales);
    auto dsum = testing::to_device(be, qw.sums);
    auto c0 = random_values(static_cast<std::size_t>(s.m) * s.n, 3);
    auto dc = testing::to_device(be, c0);
    const float alpha = 0.75f, beta = 0.5f;
    be.matmul(s.m, s.n, s.k, alpha, f32_matrix(dx.data(), s.k),
              s8_matrix(dq.data(), ds.data(), dsum.data(), s.k, Trans::Yes), beta, dc.data(), s.n, nullptr);
    const auto c = testing::to_host(be, dc);
    double worst_ratio = 0;
    for (int i = 0; i < s.m; ++i) {
      const float* xi = x.data() + static_cast<std::size_t>(i) * s.k;
      float lo = 0, hi = 0;
      for (int p = 0; p < s.k; ++p) lo = std::min(lo, xi[p]), hi = std::max(hi, xi[p]);
      const double x_step = (static_cast<double>(hi) - lo) / cpu::activation_levels();
      for (int j = 0; j < s.n; ++j) {
        const float* wj = w.data() + static_cast<std::size_t>(j) * s.k;
        double exact = 0, abs_w = 0, abs_x = 0, abs_xw = 0;
        for (int p = 0; p < s.k; ++p) {
          exact += static_cast<double>(xi[p]) * wj[p];
          abs_w += std::fabs(wj[p]), abs_x += std::fabs(xi[p]), abs_xw += std::fabs(xi[p] * wj[p]);
        }
        // |xw - x̂ŵ| <= |x - x̂||w| + |x̂||w - ŵ| with |x - x̂| <= x_step/2, |w - ŵ| <= w_step/2
        // and |x̂| <= |x| + x_step/2; plus float32 rounding of the scales and the result.
        const double w_step = qw.scales[j];
        const double bound = 0.5 * x_step * abs_w + 0.5 * w_step * (abs_x + 0.5 * x_step * s.k) + 1e-5 * abs_xw;
        const std::size_t at = static_cast<std::size_t>(i) * s.n + j;
        const double expected = alpha * exact + beta * c0[at];
        const double error = std::fabs(c[at] - expected);
        ASSERT_LE(error, alpha * bound) << s.m << "x" << s.n << "x" << s.k << " at " << i << "," << j;
        worst_ratio = std::max(worst_ratio, error / (alpha * bound));
        // And exactly (to float32 rounding) what the documented quantization computes.
        const double rule =
            alpha * dequantized_product(xi, s.k, qw.q.data() + static_cast<std::size_t>(j) * s.k, qw.scales[j]) +
            beta * c0[at];
        ASSERT_NEAR(c[at], rule, 1e-5 * (alpha * abs_xw + std::fabs(beta * c0[at])) + 1e-6)
            << s.m << "x" << s.n << "x" << s.k << " at " << i << "," << j;
      }
    }
    // The bound is not vacuous: the errors reach a visible part of it.
    EXPECT_GT(worst_ratio, 0.002) << s.m << "x" << s.n << "x" << s.k;
  }
}

// The largest sums the integer path can meet: every activation at the top level (255 with VNNI,
// 127 without) and every weight at ±127, over k = 4096. A 16-bit intermediate would saturate
// on 8-bit activations.
TEST_P(QuantizeTest, ProductOfExtremesIsExact) {
  Backend& be = *GetParam();
  const int m = 3, n = 4, k = 4096;
  std::vector<float> x(static_cast<std::size_t>(m) * k);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) x[static_cast<std::size_t>(i) * k + p] = i != 1 ? 1.0f : (p % 2 ? -1.0f : 0.0f);
  std::vector<float> w(static_cast<std::size_t>(n) * k);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p) w[static_cast<std::size_t>(j) * k + p] = (j % 2 ? -1.0f : 1.0f) * (p % 3 ? 1 : -1);
  const Quantized qw = quantize(be, w, n, k);
  auto dx = testing::to_device(be, x);
  auto dq = testing::to_device(be, qw.q);
  auto ds = testing::to_device(be, qw.scales);
  auto dsum = testing::to_device(be, qw.sums);
  DeviceBuffer<float> dc(be, static_cast<std::size_t>(m) * n);
  be.matmul(m, n, k, 1.0f, f32_matrix(dx.data(), k), s8_matrix(dq.data(), ds.data(), dsum.data(), k, Trans::Yes), 0.0f,
            dc.data(), n, nullptr);
  const auto c = testing::to_host(be, dc);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double exact = 0;
      for (int p = 0; p < k; ++p)
        exact += static_cast<double>(x[static_cast<std::size_t>(i) * k + p]) * w[static_cast<std::size_t>(j) * k + p];
      // Rows of 1 (zero point 0, 1 at the top level) and of 0 and -1 (zero point at the top) quantize exactly,
      // so the product is exact up to float32.
      EXPECT_NEAR(c[static_cast<std::size_t>(i) * n + j], exact, 1e-6 * k) << i << "," << j;
    }
}

TEST_P(QuantizeTest, EmbeddingFromInt8Rows) {
  Backend& be = *GetParam();
  // Table rows 0..2 of width 2, row r = scale_r · q_r.
  const std::vector<std::int8_t> q = {1, -2, 127, 0, -127, 5};
  const std::vector<float> scales = {0.5f, 0.01f, 2.0f};
  const std::vector<std::int32_t> sums = {-1, 127, -122};
  auto dq = testing::to_device(be, q);
  auto ds = testing::to_device(be, scales);
  auto dsum = testing::to_device(be, sums);
  auto ids = testing::to_device(be, std::vector<std::int32_t>{2, 0, 1});
  auto positions = testing::to_device(be, std::vector<float>{0.25f, -0.25f});
  DeviceBuffer<float> out(be, 6);
  be.embedding(ids.data(), 3, s8_matrix(dq.data(), ds.data(), dsum.data(), 2), 2, 2.0f, positions.data(), 1,
               out.data());
  const auto got = testing::to_host(be, out);
  const std::vector<float> expected = {-507.75f, 19.75f, 1.25f, -2.25f, 2.79f, -0.25f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], expected[i], 1e-5f) << i;
}

TEST_P(QuantizeTest, UnsupportedOperandsAreRefused) {
  Backend& be = *GetParam();
  std::vector<std::int8_t> q(16, 1);
  std::vector<float> s(4, 1);
  std::vector<std::int32_t> sums(4, 4);
  std::vector<float> x(16, 1), c(16);
  const MatrixRef w = s8_matrix(q.data(), s.data(), sums.data(), 4, Trans::Yes);
  EXPECT_THROW(be.matmul(4, 4, 4, 1, w, f32_matrix(x.data(), 4), 0, c.data(), 4, nullptr), std::exception);
  MatrixRef not_transposed = w;
  not_transposed.trans = Trans::No;
  EXPECT_THROW(be.matmul(4, 4, 4, 1, f32_matrix(x.data(), 4), not_transposed, 0, c.data(), 4, nullptr), std::exception);
  const GemmBatch batch{1, 2, 0, 0, 0, 0, 0, 0};
  EXPECT_THROW(be.matmul(4, 4, 4, 1, f32_matrix(x.data(), 4), w, 0, c.data(), 4, &batch), std::exception);
}

INSTANTIATE_TEST_SUITE_P(Backends, QuantizeTest, ::testing::ValuesIn(testing::all_backends()), testing::backend_name);

}  // namespace
}  // namespace attn
