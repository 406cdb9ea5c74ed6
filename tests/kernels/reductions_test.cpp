// kernels/cpu/reductions.h by hand: the largest element and the range with zero found wherever it
// sits (first element, a whole block's lanes, the part after the blocks), and NaN treated as
// std::max / std::min treat it.
#include "kernels/cpu/reductions.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace attn {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(RowMax, FindsTheLargestElementAtEveryPosition) {
  for (const int n : {1, 2, 16, 17, 32, 33, 40, 75})
    for (int at = 0; at < n; ++at) {
      std::vector<float> x(n);
      for (int j = 0; j < n; ++j) x[j] = -1.0f - 0.01f * static_cast<float>(j % 7);  // all below -1
      x[at] = -0.5f;
      EXPECT_EQ(cpu::row_max(x.data(), n), -0.5f) << "n " << n << ", largest at " << at;
    }
}

TEST(RowMax, SkipsNaNUnlessItComesFirst) {
  // std::max(max, NaN) keeps max; std::max(NaN, v) keeps NaN.
  std::vector<float> x(40, 1.0f);
  x[3] = kNaN, x[20] = kNaN, x[39] = kNaN, x[25] = 7.0f;
  EXPECT_EQ(cpu::row_max(x.data(), 40), 7.0f);
  x[0] = kNaN;
  EXPECT_TRUE(std::isnan(cpu::row_max(x.data(), 40)));
}

TEST(RangeWithZero, HoldsZeroAndBothExtremesWherever) {
  for (const int n : {2, 15, 16, 17, 37, 64})
    for (int at = 0; at < n; ++at) {
      const int low_at = (at + n / 2) % n;  // never at
      std::vector<float> x(n, 0.25f);
      x[at] = 3.0f, x[low_at] = -2.0f;
      float lo = 1, hi = -1;
      cpu::range_with_zero(x.data(), n, lo, hi);
      EXPECT_EQ(lo, -2.0f) << "n " << n << ", lowest at " << low_at;
      EXPECT_EQ(hi, 3.0f) << "n " << n << ", highest at " << at;
    }
}

TEST(RangeWithZero, AlwaysHoldsZeroAndSkipsNaN) {
  std::vector<float> up(20, 2.0f), down(20, -2.0f), nan(20, kNaN);
  float lo = 1, hi = -1;
  cpu::range_with_zero(up.data(), 20, lo, hi);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 2.0f);
  cpu::range_with_zero(down.data(), 20, lo, hi);
  EXPECT_EQ(lo, -2.0f);
  EXPECT_EQ(hi, 0.0f);
  nan[18] = 5.0f, nan[2] = -1.0f;
  cpu::range_with_zero(nan.data(), 20, lo, hi);
  EXPECT_EQ(lo, -1.0f);
  EXPECT_EQ(hi, 5.0f);
  cpu::range_with_zero(up.data(), 0, lo, hi);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 0.0f);
}

}  // namespace
}  // namespace attn
