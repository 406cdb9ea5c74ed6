// Backend::matmul_bias: a layer's product with its bias (then ReLU), stored in float or rounded to
// bf16, in one call. Two truths: with inputs that are small multiples of 1/8 (exact in bf16, every
// sum exact in float32) the result equals a triple loop in double plus the bias exactly; with
// random inputs it equals the backend's own matmul followed by the bias added on the host (the
// same float additions) to the bit, wherever the bias is folded into the product (bf16 shapes of
// at least 128 whose summed length is a multiple of 64, rows cut or not) and wherever it is not.
// Without a bias (null): the product alone, in float or rounded into bf16, by the same two truths.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/backends.h"
#include "common/device_vector.h"
#include "common/reference_ops.h"
#include "core/error.h"

namespace attn {
namespace {

using testing::bf16_nearest_even;

struct Case {
  int m, n, k;
};
// Small (run in float), folded (128 and up, k a multiple of 64; 200 rows: cut at 192 plus a padded
// tail), and summed lengths the bf16 product cuts (160) where the bias is added apart.
const Case kCases[] = {{5, 7, 3}, {128, 128, 128}, {200, 384, 256}, {256, 128, 192}, {300, 256, 160}, {130, 256, 100}};

std::vector<float> eighths(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((seed >> 8) % 33u) - 16) / 8.0f;
  }
  return v;
}

std::vector<Bf16> rounded(const std::vector<float>& x) {
  std::vector<Bf16> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = bf16_nearest_even(x[i]);
  return r;
}

enum class AType { f32, f32_rounded, bf16 };

class MatmulBias : public ::testing::TestWithParam<Backend*> {};

// y = x·Wᵀ + b (W [n, k] as a layer stores it; with_bias false: no b), through matmul_bias, in
// float or into bf16.
struct Outputs {
  std::vector<float> y;
  std::vector<Bf16> y16;
};
Outputs run(Backend& be, const Case& c, const std::vector<float>& x, const std::vector<float>& w,
            const std::vector<float>& bias, AType a_type, bool relu, bool into_bf16, bool with_bias = true) {
  auto dx = testing::to_device(be, x);
  auto dx16 = testing::to_device(be, rounded(x));
  auto dw = testing::to_device(be, w);
  auto dw16 = testing::to_device(be, rounded(w));
  auto db = testing::to_device(be, bias);
  MatrixRef a = a_type == AType::bf16 ? bf16_matrix(dx16.data(), c.k) : f32_matrix(dx.data(), c.k);
  if (a_type == AType::f32_rounded) a.rounded = dx16.data();
  MatrixRef b = f32_matrix(dw.data(), c.k, Trans::Yes);
  b.rounded = dw16.data();
  const std::size_t mn = static_cast<std::size_t>(c.m) * c.n;
  testing::Guarded<float> y(be, static_cast<std::int64_t>(mn));
  testing::Guarded<Bf16> y16(be, static_cast<std::int64_t>(mn));
  be.matmul_bias(c.m, c.n, c.k, a, b, with_bias ? db.data() : nullptr, relu, y.data(),
                 into_bf16 ? y16.data() : nullptr);
  Outputs r{y.host(), y16.host()};  // host() checks that nothing was written outside either
  if (!into_bf16) {
    EXPECT_EQ(r.y16, std::vector<Bf16>(mn, Bf16{0xFFFF})) << "bf16 rows written without being asked";
  }
  return r;
}

std::string str(const Case& c, AType a, bool relu, bool into_bf16, bool with_bias = true) {
  const char* names[] = {"f32", "f32+rounded", "bf16"};
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " A " +
         names[static_cast<int>(a)] + (with_bias ? "" : " no bias") + (relu ? " relu" : "") +
         (into_bf16 ? " into bf16" : " into float");
}

// The (relu, with_bias) pairs matmul_bias takes: ReLU only after a bias.
const std::pair<bool, bool> kEpilogues[] = {{false, true}, {true, true}, {false, false}};

TEST_P(MatmulBias, ExactValuesEqualATripleLoopPlusTheBias) {
  Backend& be = *GetParam();
  for (const Case& c : kCases) {
    const auto x = eighths(static_cast<std::size_t>(c.m) * c.k, 1), w = eighths(static_cast<std::size_t>(c.n) * c.k, 2);
    const auto bias = eighths(static_cast<std::size_t>(c.n), 3);
    for (AType a : {AType::f32, AType::f32_rounded, AType::bf16})
      for (const auto& [relu, with_bias] : kEpilogues)
        for (bool into_bf16 : {false, true}) {
          SCOPED_TRACE(str(c, a, relu, into_bf16, with_bias));
          const Outputs r = run(be, c, x, w, bias, a, relu, into_bf16, with_bias);
          int misses = 0;
          for (int i = 0; i < c.m; ++i)
            for (int j = 0; j < c.n; ++j) {
              double sum = with_bias ? bias[j] : 0.0;
              for (int p = 0; p < c.k; ++p)
                sum += static_cast<double>(x[static_cast<std::size_t>(i) * c.k + p]) *
                       w[static_cast<std::size_t>(j) * c.k + p];
              float want = static_cast<float>(sum);  // exact
              if (relu) want = want > 0.0f ? want : 0.0f;
              const std::size_t at = static_cast<std::size_t>(i) * c.n + j;
              misses += into_bf16 ? r.y16[at] != bf16_nearest_even(want) : r.y[at] != want;
            }
          EXPECT_EQ(misses, 0);
        }
  }
}

TEST_P(MatmulBias, RandomValuesEqualTheProductThenTheBiasToTheBit) {
  Backend& be = *GetParam();
  for (const Case& c : kCases) {
    const auto x = testing::random_values(static_cast<std::size_t>(c.m) * c.k, 4);
    const auto w = testing::random_values(static_cast<std::size_t>(c.n) * c.k, 5);
    const auto bias = testing::random_values(static_cast<std::size_t>(c.n), 6);
    for (AType a : {AType::f32, AType::f32_rounded, AType::bf16}) {
      // The product alone, as matmul computes it for the same operands.
      auto dx = testing::to_device(be, x);
      auto dx16 = testing::to_device(be, rounded(x));
      auto dw = testing::to_device(be, w);
      auto dw16 = testing::to_device(be, rounded(w));
      MatrixRef am = a == AType::bf16 ? bf16_matrix(dx16.data(), c.k) : f32_matrix(dx.data(), c.k);
      if (a == AType::f32_rounded) am.rounded = dx16.data();
      MatrixRef bm = f32_matrix(dw.data(), c.k, Trans::Yes);
      bm.rounded = dw16.data();
      DeviceBuffer<float> product(be, static_cast<std::size_t>(c.m) * c.n);
      be.matmul(c.m, c.n, c.k, 1.0f, am, bm, 0.0f, product.data(), c.n, nullptr);
      const std::vector<float> p = testing::to_host(be, product);
      for (const auto& [relu, with_bias] : kEpilogues)
        for (bool into_bf16 : {false, true}) {
          SCOPED_TRACE(str(c, a, relu, into_bf16, with_bias));
          const Outputs r = run(be, c, x, w, bias, a, relu, into_bf16, with_bias);
          int misses = 0;
          for (std::size_t at = 0; at < p.size(); ++at) {
            float want = with_bias ? p[at] + bias[at % static_cast<std::size_t>(c.n)] : p[at];
            if (relu) want = want > 0.0f ? want : 0.0f;
            misses += into_bf16 ? r.y16[at] != bf16_nearest_even(want)
                                : std::bit_cast<std::uint32_t>(r.y[at]) != std::bit_cast<std::uint32_t>(want);
          }
          EXPECT_EQ(misses, 0) << "of " << p.size();
        }
    }
  }
}

TEST_P(MatmulBias, ReluWithoutABiasIsRefused) {
  Backend& be = *GetParam();
  const Case c{128, 128, 128};
  auto dx = testing::to_device(be, eighths(static_cast<std::size_t>(c.m) * c.k, 1));
  auto dw = testing::to_device(be, eighths(static_cast<std::size_t>(c.n) * c.k, 2));
  DeviceBuffer<float> y(be, static_cast<std::size_t>(c.m) * c.n);
  try {
    be.matmul_bias(c.m, c.n, c.k, f32_matrix(dx.data(), c.k), f32_matrix(dw.data(), c.k, Trans::Yes), nullptr, true,
                   y.data(), nullptr);
    FAIL() << "ReLU without a bias was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ReLU after a bias only"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MatmulBias, ::testing::ValuesIn(testing::all_backends()), testing::backend_name);

}  // namespace
}  // namespace attn
