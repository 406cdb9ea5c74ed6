// oneDNN's matmul primitives, for every input type (float32, bf16 and u8·s8), with the rows of a bf16
// or int8 product cut at a multiple of 64 (the rest run padded to 64 rows). The inputs are small multiples of 1/8
// (exact in bf16, and every sum of their products exact in float32), so each product must equal a
// triple loop in double exactly.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/ops.h"

namespace attn {
namespace {

using cpu::MatmulInput;

const char* name(MatmulInput in) { return in == MatmulInput::f32 ? "f32" : in == MatmulInput::bf16 ? "bf16" : "u8s8"; }

// Values -2..2 in steps of 1/8 (f32, bf16), or small integers (u8: 0..9, s8: -5..5), by a fixed LCG.
struct Values {
  std::uint32_t state;
  int next(int span) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % static_cast<std::uint32_t>(span));
  }
};

// An operand of `count` elements in the layout the input type takes, and its values as doubles.
struct Operand {
  std::vector<float> f32;
  std::vector<std::uint16_t> bf16;
  std::vector<std::uint8_t> u8;
  std::vector<std::int8_t> s8;
  std::vector<double> value;
  const void* data(MatmulInput in, bool is_a) const {
    if (in == MatmulInput::f32) return f32.data();
    if (in == MatmulInput::bf16) return bf16.data();
    return is_a ? static_cast<const void*>(u8.data()) : static_cast<const void*>(s8.data());
  }
};

Operand operand(MatmulInput in, bool is_a, std::size_t count, std::uint32_t seed) {
  Operand o;
  Values v{seed};
  for (std::size_t i = 0; i < count; ++i) {
    if (in == MatmulInput::u8s8) {
      const int x = is_a ? v.next(10) : v.next(11) - 5;
      o.u8.push_back(static_cast<std::uint8_t>(is_a ? x : 0));
      o.s8.push_back(static_cast<std::int8_t>(is_a ? 0 : x));
      o.value.push_back(x);
    } else {
      const float x = static_cast<float>(v.next(33) - 16) / 8.0f;
      o.f32.push_back(x);
      o.bf16.push_back(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x) >> 16));  // exact: 5 bits
      o.value.push_back(x);
    }
  }
  return o;
}

bool supported(MatmulInput in) { return in != MatmulInput::bf16 || cpu::bf16_matmul_supported(); }

// C = alpha·op(A)·B + beta·C with m rows, A transposed or not, C with 2 more rows below it and
// padding columns: equal to the double-precision product, nothing written outside C.
void check_product(MatmulInput in, int m, bool ta, float alpha, float beta, std::uint32_t seed) {
  const int n = 80, k = 96;
  const int lda = (ta ? m : k) + 3, ldb = n + 5, ldc = n + 2;
  const Operand a = operand(in, true, static_cast<std::size_t>(ta ? k : m) * lda, seed);
  const Operand b = operand(in, false, static_cast<std::size_t>(k) * ldb, seed + 1);
  const std::size_t c_count = static_cast<std::size_t>(m + 2) * ldc;
  std::vector<float> c(c_count);
  std::vector<std::int32_t> ci(c_count);
  Values v{seed + 2};
  for (std::size_t i = 0; i < c_count; ++i) {
    c[i] = static_cast<float>(v.next(17) - 8) / 4.0f;
    ci[i] = v.next(1000) - 500;
  }
  const std::vector<float> c_before = c;
  const std::vector<std::int32_t> ci_before = ci;
  cpu::MatmulDesc d = cpu::matmul_desc(ta ? Trans::Yes : Trans::No, Trans::No, m, n, k, lda, ldb, ldc, alpha, beta);
  d.input = in;
  const bool integer = in == MatmulInput::u8s8;
  cpu::run_matmul(d, a.data(in, true), b.data(in, false), integer ? static_cast<void*>(ci.data()) : c.data());
  for (int i = 0; i < m + 2; ++i)
    for (int j = 0; j < ldc; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
      const double got = integer ? ci[at] : c[at];
      const double before = integer ? ci_before[at] : c_before[at];
      if (i >= m || j >= n) {
        ASSERT_EQ(got, before) << name(in) << ": written outside C at row " << i << ", column " << j << " (m=" << m
                               << ")";
        continue;
      }
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += a.value[ta ? static_cast<std::size_t>(p) * lda + i : static_cast<std::size_t>(i) * lda + p] *
               b.value[static_cast<std::size_t>(p) * ldb + j];
      ASSERT_EQ(got, alpha * sum + beta * before)
          << name(in) << " m=" << m << " ta=" << ta << " beta=" << beta << " at row " << i << ", column " << j;
    }
}

class MatmulRows : public ::testing::TestWithParam<MatmulInput> {};

TEST_P(MatmulRows, RowsOffTheStepOf64EqualTheExactProduct) {
  const MatmulInput in = GetParam();
  if (!supported(in)) GTEST_SKIP() << "no AVX512-BF16 (Bf16Support.DetectionAgreesWithTheKernelsCpuFlags checks)";
  std::uint32_t seed = 1;
  for (const int m : {5, 64, 65, 100, 127, 128, 200})
    for (const bool ta : {false, true}) {
      if (in == MatmulInput::u8s8) {  // integer sums: alpha 1, beta 0, A as stored (gemm_s8's layout)
        if (!ta) check_product(in, m, false, 1.0f, 0.0f, seed += 3);
        continue;
      }
      for (const float beta : {0.0f, 0.5f}) check_product(in, m, ta, 0.5f, beta, seed += 3);
    }
}

// A run's row counts share a few bf16 or int8 primitives (each one JIT-compiled code): 128 row counts
// from 65 to 192 build the heads of 64, 128 and 192 rows and the padded tail, not one per count.
// (float32 keeps one per count: matmul_primitive.cpp says why.)
TEST(MatmulRowCounts, ShareBf16AndInt8PrimitivesPerStepOf64) {
  for (const MatmulInput in : {MatmulInput::bf16, MatmulInput::u8s8}) {
    if (!supported(in)) {  // Bf16Support.DetectionAgreesWithTheKernelsCpuFlags checks that the CPU lacks it
      std::printf("%s: skipped, no AVX512-BF16\n", name(in));
      continue;
    }
    const int n = 128, k = 128, most = 192;
    const Operand a = operand(in, true, static_cast<std::size_t>(most) * k, 3);
    const Operand b = operand(in, false, static_cast<std::size_t>(k) * n, 4);
    std::vector<float> c(static_cast<std::size_t>(most) * n);
    const std::int64_t before = cpu::matmul_primitives_built();
    for (int m = 65; m <= most; ++m) {
      cpu::MatmulDesc d = cpu::matmul_desc(Trans::No, Trans::No, m, n, k, k, n, n, 1.0f, 0.0f);
      d.input = in;
      cpu::run_matmul(d, a.data(in, true), b.data(in, false), c.data());
    }
    const std::int64_t built = cpu::matmul_primitives_built() - before;
    std::printf("%s: %lld primitives for 128 row counts\n", name(in), static_cast<long long>(built));
    EXPECT_LE(built, 4) << name(in);
  }
}

INSTANTIATE_TEST_SUITE_P(Inputs, MatmulRows, ::testing::Values(MatmulInput::f32, MatmulInput::bf16, MatmulInput::u8s8),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
}  // namespace attn
