// Mixed-precision products (precision bf16) against a double-precision triple loop over inputs
// rounded to bfloat16 by an independent rule: keep 8 significant bits, ties to even.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>

#include "common/device_vector.h"
#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace attn {
namespace {

using testing::random_values;

// x rounded to the nearest number with 8 significant bits (bfloat16's precision), ties to even.
double bf16_round(float x) {
  if (x == 0.0f) return 0.0;
  int e = 0;
  const double mantissa = std::frexp(static_cast<double>(x), &e);  // [0.5, 1)
  return std::ldexp(std::nearbyint(mantissa * 256.0) / 256.0, e);  // FE_TONEAREST: ties to even
}

struct Product {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc;
};

// C = alpha · op(A) op(B) + beta · C in double, with the inputs rounded by round_input.
template <typename Round>
std::vector<double> reference(const Product& p, float alpha, const std::vector<float>& a,
                              const std::vector<float>& b, float beta, const std::vector<float>& c,
                              Round round_input) {
  std::vector<double> out(c.begin(), c.end());
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) {
      double acc = 0;
      for (int q = 0; q < p.k; ++q) {
        const float av = p.ta ? a[q * p.lda + i] : a[i * p.lda + q];
        const float bv = p.tb ? b[j * p.ldb + q] : b[q * p.ldb + j];
        acc += round_input(av) * round_input(bv);
      }
      out[i * p.ldc + j] = alpha * acc + beta * out[i * p.ldc + j];
    }
  return out;
}

class GemmBf16Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  }
};

TEST(GemmBf16Precision, NamesAreParsedAndBadOnesRefused) {
  EXPECT_EQ(parse_matmul_precision("fp32"), MatmulPrecision::fp32);
  EXPECT_EQ(parse_matmul_precision("bf16"), MatmulPrecision::bf16);
  EXPECT_EQ(to_string(MatmulPrecision::bf16), "bf16");
  try {
    parse_matmul_precision("fp16");
    FAIL() << "fp16 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
  }
  if (!cpu::bf16_matmul_supported()) {
    EXPECT_THROW(cpu_backend(MatmulPrecision::bf16), Error);
  }
}

TEST_F(GemmBf16Test, AllTransposesEqualTheProductOfRoundedInputs) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  const int m = 150, n = 136, k = 260;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (float beta : {0.0f, 0.25f}) {
        const Product p{ta, tb, m, n, k, (ta ? m : k) + 3, (tb ? k : n) + 5, n + 2};
        auto a = random_values(static_cast<std::size_t>(ta ? k : m) * p.lda, 1);
        auto b = random_values(static_cast<std::size_t>(tb ? n : k) * p.ldb, 2);
        auto c = random_values(static_cast<std::size_t>(m) * p.ldc, 3);
        const auto rounded = reference(p, 0.5f, a, b, beta, c, bf16_round);
        const auto exact = reference(p, 0.5f, a, b, beta, c, [](float x) { return double(x); });
        auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
        be.gemm(Trans{ta}, Trans{tb}, m, n, k, 0.5f, da.data(), p.lda, db.data(), p.ldb, beta, dc.data(), p.ldc);
        const auto got = testing::to_host(be, dc);
        double max_rounding_effect = 0;
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * p.ldc + j;
            // float32 sums of k = 260 products of size <= 1: well inside 1e-4.
            ASSERT_NEAR(got[at], rounded[at], 1e-4) << "ta=" << ta << " tb=" << tb << " beta=" << beta;
            max_rounding_effect = std::max(max_rounding_effect, std::abs(rounded[at] - exact[at]));
          }
          for (int j = n; j < p.ldc; ++j) ASSERT_EQ(got[i * p.ldc + j], c[i * p.ldc + j]);  // padding untouched
        }
        // The inputs really were rounded: bf16's 2^-9 relative error shows, far above 1e-4.
        EXPECT_GT(max_rounding_effect, 1e-3);
      }
}

TEST_F(GemmBf16Test, ReusedShapesTakeNewDataAndSmallProductsStayFloat32) {
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  unsigned seed = 10;
  for (const Product p : {Product{false, true, 256, 128, 192, 192, 192, 128},   // cached primitive, twice
                          Product{false, true, 256, 128, 192, 192, 192, 128},
                          Product{false, true, 32, 512, 256, 256, 256, 512}}) {  // 32 rows: float32
    auto a = random_values(static_cast<std::size_t>(p.m) * p.lda, ++seed);
    auto b = random_values(static_cast<std::size_t>(p.n) * p.ldb, ++seed);
    std::vector<float> c(static_cast<std::size_t>(p.m) * p.ldc, 0.0f);
    const bool small = p.m < cpu::kMinBf16Dim;
    const auto expected = small ? reference(p, 1.0f, a, b, 0.0f, c, [](float x) { return double(x); })
                                : reference(p, 1.0f, a, b, 0.0f, c, bf16_round);
    auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
    be.gemm(Trans::No, Trans::Yes, p.m, p.n, p.k, 1.0f, da.data(), p.lda, db.data(), p.ldb, 0.0f, dc.data(), p.ldc);
    const auto got = testing::to_host(be, dc);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], small ? 2e-5 : 1e-4) << i;
  }
}

}  // namespace
}  // namespace attn
