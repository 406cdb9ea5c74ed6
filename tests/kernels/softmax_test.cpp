// The CPU's attention softmax (the step inside Backend::attention and its backward, cpu/ops.h):
// hand-worked values, masks, and the gradient against finite differences of a double-precision
// reference.
#include <bit>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "common/finite_difference.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/softmax_rows.h"

namespace attn {
namespace {

using testing::random_values;

// Whether got[0, n) holds the bits of want[0, n) (a NaN matching any NaN), naming the first that differs.
::testing::AssertionResult same_bits(const float* got, const std::vector<float>& want) {
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (std::isnan(want[k]) ? std::isnan(got[k])
                            : std::bit_cast<std::uint32_t>(got[k]) == std::bit_cast<std::uint32_t>(want[k]))
      continue;
    return ::testing::AssertionFailure() << "key " << k << ": " << got[k] << " against " << want[k];
  }
  return ::testing::AssertionSuccess();
}

TEST(AttentionSoftmax, HandWorkedRow) {
  // softmax([1, 2, 3]) = [e^1, e^2, e^3] / (e^1 + e^2 + e^3) = [0.09003057, 0.24472847, 0.66524096]
  std::vector<float> p{2, 4, 6};
  cpu::attention_softmax(p.data(), 1, 1, 1, 3, AttentionMask{}, 0.5f);
  EXPECT_NEAR(p[0], 0.09003057, 1e-6);
  EXPECT_NEAR(p[1], 0.24472847, 1e-6);
  EXPECT_NEAR(p[2], 0.66524096, 1e-6);
}

// A score that is NaN (a diverging model) makes its whole row NaN, never a row of finite
// probabilities that would hide it; the rows beside it stay as they were.
TEST(AttentionSoftmax, ANanScoreMakesItsRowNan) {
  for (int keys : {3, 32, 37}) {
    SCOPED_TRACE(std::to_string(keys) + " keys");
    std::vector<float> scores(2 * static_cast<std::size_t>(keys), 1.0f);
    scores[keys - 1] = std::nanf("");
    std::vector<float> p = scores;
    cpu::attention_softmax(p.data(), 1, 1, 2, keys, AttentionMask{}, 1.0f);
    for (int k = 0; k < keys; ++k) EXPECT_TRUE(std::isnan(p[k])) << "key " << k;
    for (int k = 0; k < keys; ++k) EXPECT_NEAR(p[keys + k], 1.0 / keys, 1e-7) << "key " << k;
  }
}

TEST(AttentionSoftmax, MasksPaddingFutureAndWindow) {
  // Short and long rows (6, 37 and 70 keys: the vector loops' remainders differ).
  const int B = 2, H = 2;
  for (int T : {6, 37, 70}) {
    SCOPED_TRACE("rows of " + std::to_string(T));
    for (int window : {0, 2})
      for (bool causal : {false, true}) {
        const std::vector<std::int32_t> lengths{T, T - 2};
        const auto scores = random_values(static_cast<std::size_t>(B) * H * T * T, 7, -3, 3);
        std::vector<float> p = scores;
        cpu::attention_softmax(p.data(), B, H, T, T, AttentionMask{lengths.data(), causal, 0, window}, 0.7f);
        const int len[2] = {T, T - 2};
        for (int b = 0; b < B; ++b)
          for (int h = 0; h < H; ++h)
            for (int q = 0; q < T; ++q) {
              const float* row = &p[((b * H + h) * T + q) * T];
              const float* raw = &scores[((b * H + h) * T + q) * T];
              double denom = 0;
              auto visible = [&](int k) {
                return k < len[b] && (!causal || k <= q) && (window == 0 || std::abs(q - k) <= window);
              };
              for (int k = 0; k < T; ++k) {
                if (visible(k)) denom += std::exp(0.7 * raw[k]);
              }
              double sum = 0;
              for (int k = 0; k < T; ++k) {
                const double want = visible(k) ? std::exp(0.7 * raw[k]) / denom : 0.0;
                ASSERT_NEAR(row[k], want, 1e-6) << "b" << b << " q" << q << " k" << k;
                if (!visible(k)) {
                  ASSERT_EQ(row[k], 0.0f);
                }
                sum += row[k];
              }
              ASSERT_NEAR(sum, 1.0, 1e-6);
            }
      }
  }
}

// softmax_rows takes sixteen rows at a time (their largest values and sums reduced side by side);
// each row must come out with the bits softmax_row gives it alone (the row-by-row order the tests
// above hold to a float64 reference): every key count around the vector width, row counts with
// and without a remainder, rows with an empty key range, ranges cut at both ends, and a NaN.
TEST(AttentionSoftmax, SixteenRowsAtOnceGiveEachRowTheBitsOfTheRowAlone) {
  for (int tk : {1, 5, 16, 17, 32, 37, 70})
    for (int count : {15, 16, 33}) {
      SCOPED_TRACE(std::to_string(count) + " rows of " + std::to_string(tk) + " keys");
      auto scores = random_values(static_cast<std::size_t>(count) * tk, 41 + tk, -30, 30);
      if (tk > 3) scores[static_cast<std::size_t>(5) * tk + 2] = std::nanf("");
      std::vector<cpu::KeyRange> keys(count);
      for (int r = 0; r < count; ++r) {
        const int lo = (r % 3 == 0) ? 0 : (r * 7) % tk, hi = (r % 4 == 0) ? tk : (r * 11 + 3) % (tk + 1);
        keys[r] = {lo, r % 9 == 8 ? lo : hi};  // every ninth row empty; some others empty by their cut
      }
      std::vector<float> together = scores;
      cpu::softmax_rows(
          together.data(), count, tk, [&](int r) { return keys[r]; }, 0.37f);
      for (int r = 0; r < count; ++r) {
        std::vector<float> alone(scores.begin() + r * tk, scores.begin() + (r + 1) * tk);
        cpu::softmax_row(alone.data(), tk, keys[r], 0.37f);
        ASSERT_TRUE(same_bits(together.data() + static_cast<std::size_t>(r) * tk, alone))
            << "row " << r << " [" << keys[r].lo << ", " << keys[r].hi << ")";
      }
    }
}

// softmax_backward_rows takes sixteen rows at a time (their sums Σ d·p reduced side by side); each
// row must come out with the bits softmax_backward_row gives it alone (whose values the finite
// differences below check): key counts around the vector width, row counts with and without a
// remainder, a NaN gradient.
TEST(AttentionSoftmax, BackwardSixteenRowsAtOnceGiveEachRowTheBitsOfTheRowAlone) {
  for (int tk : {1, 5, 15, 16, 17, 32, 37, 70})
    for (int count : {15, 16, 33}) {
      SCOPED_TRACE(std::to_string(count) + " rows of " + std::to_string(tk) + " keys");
      auto d = random_values(static_cast<std::size_t>(count) * tk, 51 + tk, -30, 30);
      const auto p = random_values(static_cast<std::size_t>(count) * tk, 61 + tk, 0, 1);
      if (tk > 3) d[static_cast<std::size_t>(5) * tk + 2] = std::nanf("");
      std::vector<float> together = d;
      cpu::softmax_backward_rows(together.data(), p.data(), count, tk, 0.37f);
      for (int r = 0; r < count; ++r) {
        std::vector<float> alone(d.begin() + r * tk, d.begin() + (r + 1) * tk);
        cpu::softmax_backward_row(alone.data(), p.data() + static_cast<std::size_t>(r) * tk, tk, 0.37f);
        ASSERT_TRUE(same_bits(together.data() + static_cast<std::size_t>(r) * tk, alone)) << "row " << r;
      }
    }
}

TEST(AttentionSoftmax, IncrementalQueryOffsetSeesThePrefix) {
  // One query at position 2 of a causal sequence sees keys 0..2 of 5.
  std::vector<float> p{0, 0, 0, 9, 9};
  cpu::attention_softmax(p.data(), 1, 1, 1, 5, AttentionMask{nullptr, true, 2, 0}, 1.0f);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[k], 1.0 / 3, 1e-6);
  EXPECT_EQ(p[3], 0.0f);
  EXPECT_EQ(p[4], 0.0f);
}

TEST(AttentionSoftmax, BackwardMatchesFiniteDifferences) {
  const int rows = 3, tk = 5;
  const float scale = 0.8f;
  auto scores = random_values(rows * tk, 11, -2, 2);
  auto weights = random_values(rows * tk, 12);  // L = Σ w · softmax(scale · s)
  auto loss = [&](const std::vector<double>& s) {
    double total = 0;
    for (int r = 0; r < rows; ++r) {
      double denom = 0;
      for (int k = 0; k < tk; ++k) denom += std::exp(scale * s[r * tk + k]);
      for (int k = 0; k < tk; ++k) total += weights[r * tk + k] * std::exp(scale * s[r * tk + k]) / denom;
    }
    return total;
  };
  auto expected = testing::numerical_gradient(loss, testing::to_double(scores));
  std::vector<float> probs = scores;
  cpu::attention_softmax(probs.data(), 1, 1, rows, tk, AttentionMask{}, scale);
  std::vector<float> got = weights;  // ∂L/∂probs = w
  cpu::attention_softmax_backward(got.data(), probs.data(), rows, tk, scale);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << i;
}

}  // namespace
}  // namespace attn
