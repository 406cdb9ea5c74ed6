// Mixed-precision products (precision bf16) against a double-precision triple loop over inputs
// rounded to bfloat16 by an independent rule: keep 8 significant bits, ties to even.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "common/bf16_rounding.h"
#include "common/device_vector.h"
#include "core/error.h"
#include "kernels/device_buffer.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"

namespace attn {
namespace {

using testing::bf16_bits;
using testing::bf16_round;
using testing::random_values;

// The bf16 tests skip only where the CPU lacks AVX512-BF16. Whether it has it is read here from the
// kernel's own list of CPU flags, independently of the detection the kernels use: on a CPU with the
// flag, a detection that said no (and so skipped every bf16 test) fails this test.
TEST(Bf16Support, DetectionAgreesWithTheKernelsCpuFlags) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  ASSERT_TRUE(cpuinfo) << "cannot read /proc/cpuinfo";
  std::string line;
  bool found = false, has_flag = false;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    found = true;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) has_flag = has_flag || w == "avx512_bf16";
    break;
  }
  ASSERT_TRUE(found) << "no flags line in /proc/cpuinfo";
  EXPECT_EQ(cpu::bf16_matmul_supported(), has_flag)
      << "/proc/cpuinfo " << (has_flag ? "lists" : "does not list") << " avx512_bf16";
  std::printf("AVX512-BF16: %s (the bf16 tests %s)\n", has_flag ? "yes" : "no", has_flag ? "run" : "skip");
}

struct Product {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc;
};

// C = alpha · op(A) op(B) + beta · C in double, with the inputs rounded by round_input.
template <typename Round>
std::vector<double> reference(const Product& p, float alpha, const std::vector<float>& a, const std::vector<float>& b,
                              float beta, const std::vector<float>& c, Round round_input) {
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
        be.matmul(m, n, k, 0.5f, f32_matrix(da.data(), p.lda, Trans{ta}), f32_matrix(db.data(), p.ldb, Trans{tb}), beta,
                  dc.data(), p.ldc, nullptr);
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

// Rows and summed lengths that are no multiple of 64 (a training batch's) are cut at one, the rest
// computed zero-padded: every transpose, beta, the rows below C and its padding columns untouched.
TEST_F(GemmBf16Test, RowsAndSumsOffTheShapeStepEqualTheProductOfRoundedInputs) {
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  const int n = 136;
  unsigned seed = 40;
  for (const int m : {129, 161, 200})
    for (const int k : {128, 130, 191})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (float beta : {0.0f, 0.25f}) {
            const Product p{ta, tb, m, n, k, (ta ? m : k) + 3, (tb ? k : n) + 5, n + 2};
            auto a = random_values(static_cast<std::size_t>(ta ? k : m) * p.lda, ++seed);
            auto b = random_values(static_cast<std::size_t>(tb ? n : k) * p.ldb, ++seed);
            auto c = random_values(static_cast<std::size_t>(m + 2) * p.ldc, ++seed);  // 2 rows below C
            const auto expected = reference(p, 0.5f, a, b, beta, c, bf16_round);
            auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
            be.matmul(m, n, k, 0.5f, f32_matrix(da.data(), p.lda, Trans{ta}), f32_matrix(db.data(), p.ldb, Trans{tb}),
                      beta, dc.data(), p.ldc, nullptr);
            const auto got = testing::to_host(be, dc);
            for (int i = 0; i < m + 2; ++i)
              for (int j = 0; j < p.ldc; ++j) {
                const std::size_t at = static_cast<std::size_t>(i) * p.ldc + j;
                if (i < m && j < n)
                  ASSERT_NEAR(got[at], expected[at], 1e-4)
                      << "m=" << m << " k=" << k << " ta=" << ta << " tb=" << tb << " beta=" << beta;
                else
                  ASSERT_EQ(got[at], c[at]) << "written outside C: row " << i << " column " << j << " (m=" << m << ")";
              }
          }
}

// A run's hundreds of row counts share a few primitives (each one JIT-compiled code): 64 row counts
// from 128 to 191, and 64 summed lengths, each build a handful (128 rows or sums, the padded 64,
// the converted operand's row length in steps of 64), where one per shape would build 64.
TEST_F(GemmBf16Test, RowCountsAndSumsSharePrimitivesPerStepOf64) {
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  const int n = 256, most = 191;
  auto a = random_values(static_cast<std::size_t>(most) * most, 7),
       b = random_values(static_cast<std::size_t>(most) * n, 8);
  std::vector<float> c(static_cast<std::size_t>(most) * n, 0.0f);
  auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
  for (const bool rows : {true, false}) {
    const std::int64_t before = cpu::matmul_primitives_built();
    for (int v = 128; v <= most; ++v) {
      const int m = rows ? v : 160, k = rows ? 160 : v;
      be.matmul(m, n, k, 1.0f, f32_matrix(da.data(), most), f32_matrix(db.data(), n), 0.0f, dc.data(), n, nullptr);
    }
    EXPECT_LE(cpu::matmul_primitives_built() - before, 6) << (rows ? "row counts" : "summed lengths");
  }
}

TEST_F(GemmBf16Test, ReusedShapesTakeNewDataAndSmallProductsStayFloat32) {
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  unsigned seed = 10;
  for (const Product p : {Product{false, true, 256, 128, 192, 192, 192, 128},  // cached primitive, twice
                          Product{false, true, 256, 128, 192, 192, 192, 128},
                          Product{false, true, 32, 512, 256, 256, 256, 512}}) {  // 32 rows: float32
    auto a = random_values(static_cast<std::size_t>(p.m) * p.lda, ++seed);
    auto b = random_values(static_cast<std::size_t>(p.n) * p.ldb, ++seed);
    std::vector<float> c(static_cast<std::size_t>(p.m) * p.ldc, 0.0f);
    const bool small = p.m < cpu::kMinBf16Dim;
    const auto expected = small ? reference(p, 1.0f, a, b, 0.0f, c, [](float x) { return double(x); })
                                : reference(p, 1.0f, a, b, 0.0f, c, bf16_round);
    auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
    be.matmul(p.m, p.n, p.k, 1.0f, f32_matrix(da.data(), p.lda), f32_matrix(db.data(), p.ldb, Trans::Yes), 0.0f,
              dc.data(), p.ldc, nullptr);
    const auto got = testing::to_host(be, dc);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], small ? 2e-5 : 1e-4) << i;
  }
}

TEST_F(GemmBf16Test, ConversionRoundsToNearestEven) {
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  ASSERT_TRUE(be.keeps_bf16_activations());
  // Random values, two exact ties (1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even
  // one, 1; 1 + 3·2^-8 between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6), minus zero, and a length
  // that is not a multiple of 4096 or 16.
  auto x = random_values(4096 * 2 + 37, 21, -3, 3);
  x[0] = 1.0f + 1.0f / 256, x[1] = 1.0f + 3.0f / 256, x[2] = -0.0f, x[3] = 1e-3f;
  auto dx = testing::to_device(be, x);
  DeviceBuffer<Bf16> y(be, x.size());
  be.to_bf16(dx.data(), static_cast<std::int64_t>(x.size()), y.data());
  std::vector<Bf16> got(x.size());
  be.copy_to_host(got.data(), y.data(), got.size() * sizeof(Bf16));
  EXPECT_EQ(got[0], 0x3f80);  // 1.0
  EXPECT_EQ(got[1], 0x3f82);  // 1 + 2^-6
  EXPECT_EQ(got[2], 0x8000);  // -0 keeps its sign
  for (std::size_t i = 3; i < x.size(); ++i) ASSERT_EQ(got[i], bf16_bits(x[i])) << i << " " << x[i];
}

TEST_F(GemmBf16Test, BatchedBlocksRoundEveryOperandToBf16) {
  // A bf16 backend's batched products (attention's): every operand (bf16 ones read in place, float
  // ones rounded on the way in, as the backend's precision says) is a bf16 value and the sums are float32, so the
  // result is the exact product of the rounded operands up to float32 summation. Every transpose, bf16 on neither,
  // either or both sides, sides that are not multiples of the tiles (odd k included), beta = 0 over NaN. A side over
  // 256 takes the block-by-block route, which reads the operands' exact values in float32 (float operands not rounded).
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  const int outer = 2, inner = 3, count = outer * inner;
  struct Dims {
    int m, n, k;
  };
  for (Dims d :
       {Dims{32, 32, 64}, Dims{32, 64, 32}, Dims{37, 33, 21}, Dims{9, 16, 64}, Dims{8, 260, 6}, Dims{260, 8, 300}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int which : {0, 1, 2, 3})  // bit 0: A in bf16, bit 1: B in bf16
          for (float beta : {0.25f, 0.0f}) {
            const bool a16 = which & 1, b16 = which & 2;
            const int m = d.m, n = d.n, k = d.k;
            const bool rounded = std::max({m, n, k}) <= 256;
            const int lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 3;
            const std::int64_t sa = static_cast<std::int64_t>(ta ? k : m) * lda,
                               sb = static_cast<std::int64_t>(tb ? n : k) * ldb,
                               sc = static_cast<std::int64_t>(m) * ldc;
            auto a = random_values(static_cast<std::size_t>(sa * count), 31);
            auto b = random_values(static_cast<std::size_t>(sb * count), 32);
            std::vector<float> c = random_values(static_cast<std::size_t>(sc * count), 33);
            if (beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
            // The bf16 operands' values, as float (exact), for the reference.
            std::vector<Bf16> a_bits(a.size()), b_bits(b.size());
            for (std::size_t i = 0; i < a.size(); ++i) a_bits[i] = bf16_bits(a[i]);
            for (std::size_t i = 0; i < b.size(); ++i) b_bits[i] = bf16_bits(b[i]);
            std::vector<float> a_used = a, b_used = b;
            if (a16 || rounded)
              for (float& x : a_used) x = static_cast<float>(bf16_round(x));
            if (b16 || rounded)
              for (float& x : b_used) x = static_cast<float>(bf16_round(x));
            auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
            DeviceBuffer<Bf16> da16(be, a.size()), db16(be, b.size());
            be.copy_to_device(da16.data(), a_bits.data(), a_bits.size() * sizeof(Bf16));
            be.copy_to_device(db16.data(), b_bits.data(), b_bits.size() * sizeof(Bf16));
            const GemmBatch batch{outer, inner, inner * sa, sa, inner * sb, sb, inner * sc, sc};
            // The backend's precision rounds the float operands too.
            be.matmul(m, n, k, 0.5f,
                      a16 ? bf16_matrix(da16.data(), lda, Trans{ta}) : f32_matrix(da.data(), lda, Trans{ta}),
                      b16 ? bf16_matrix(db16.data(), ldb, Trans{tb}) : f32_matrix(db.data(), ldb, Trans{tb}), beta,
                      dc.data(), ldc, &batch);
            const auto got = testing::to_host(be, dc);
            for (int i = 0; i < count; ++i) {
              const Product p{ta, tb, m, n, k, lda, ldb, ldc};
              const std::vector<float> ai(a_used.begin() + i * sa, a_used.begin() + (i + 1) * sa);
              const std::vector<float> bi(b_used.begin() + i * sb, b_used.begin() + (i + 1) * sb);
              std::vector<float> ci(c.begin() + i * sc, c.begin() + (i + 1) * sc);
              if (beta == 0.0f) std::fill(ci.begin(), ci.end(), 0.0f);
              const auto expected = reference(p, 0.5f, ai, bi, beta, ci, [](float x) { return double(x); });
              for (int r = 0; r < m; ++r)
                for (int j = 0; j < n; ++j) {
                  const std::size_t at = static_cast<std::size_t>(r) * ldc + j;
                  ASSERT_NEAR(got[i * sc + at], expected[at], 1e-5)
                      << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb << " a16=" << a16 << " b16=" << b16
                      << " beta=" << beta;
                }
            }
          }
}

TEST_F(GemmBf16Test, OperandsKeptInBf16AreReadInPlace) {
  // A, B or both handed over as bf16 (strided, every transpose), large enough for the bf16
  // kernel and small enough (32 rows) for the float32 fallback, which widens them exactly. The
  // values are bf16 numbers in both forms, so the product is theirs, computed in double.
  Backend& be = cpu_backend(MatmulPrecision::bf16);
  for (int m : {160, 32})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int which : {1, 2, 3}) {  // bit 1: A in bf16, bit 2: B in bf16
          const Product p{ta, tb, m, 144, 136, (ta ? m : 136) + 3, (tb ? 136 : 144) + 5, 144 + 2};
          auto a = random_values(static_cast<std::size_t>(ta ? p.k : m) * p.lda, 31);
          auto b = random_values(static_cast<std::size_t>(tb ? p.n : p.k) * p.ldb, 32);
          for (auto& v : a) v = static_cast<float>(bf16_round(v));
          for (auto& v : b) v = static_cast<float>(bf16_round(v));
          auto c = random_values(static_cast<std::size_t>(m) * p.ldc, 33);
          const auto expected = reference(p, 0.5f, a, b, 0.25f, c, [](float x) { return double(x); });
          std::vector<Bf16> a16(a.size()), b16(b.size());
          for (std::size_t i = 0; i < a.size(); ++i) a16[i] = bf16_bits(a[i]);
          for (std::size_t i = 0; i < b.size(); ++i) b16[i] = bf16_bits(b[i]);
          auto da = testing::to_device(be, a), db = testing::to_device(be, b), dc = testing::to_device(be, c);
          DeviceBuffer<Bf16> da16(be, a16.size()), db16(be, b16.size());
          be.copy_to_device(da16.data(), a16.data(), a16.size() * sizeof(Bf16));
          be.copy_to_device(db16.data(), b16.data(), b16.size() * sizeof(Bf16));
          const bool a_bf16 = which & 1, b_bf16 = which & 2;
          be.matmul(m, p.n, p.k, 0.5f,
                    a_bf16 ? bf16_matrix(da16.data(), p.lda, Trans{ta}) : f32_matrix(da.data(), p.lda, Trans{ta}),
                    b_bf16 ? bf16_matrix(db16.data(), p.ldb, Trans{tb}) : f32_matrix(db.data(), p.ldb, Trans{tb}),
                    0.25f, dc.data(), p.ldc, nullptr);
          const auto got = testing::to_host(be, dc);
          for (int i = 0; i < m; ++i) {
            for (int j = 0; j < p.n; ++j)
              ASSERT_NEAR(got[i * p.ldc + j], expected[i * p.ldc + j], 1e-4)
                  << "m=" << m << " ta=" << ta << " tb=" << tb << " bf16 operands=" << which;
            for (int j = p.n; j < p.ldc; ++j) ASSERT_EQ(got[i * p.ldc + j], c[i * p.ldc + j]);
          }
        }
}

}  // namespace
}  // namespace attn
