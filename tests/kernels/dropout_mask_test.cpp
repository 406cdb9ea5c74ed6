// Dropout's mask rule (kernels/cpu/dropout_mask.h): element fates worked out by hand from the hash
// (lowbias32, computed apart in Python), and the row form against the element rule everywhere,
// across the 2^32 boundary of the index's lower half included.
#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu/dropout_mask.h"

namespace attn {
namespace {

// Seed 0x0000000500000003, p = 0.5: kept where the hash's top bit is set. The hashes (h =
// mix32(mix32(lo ^ 3) + (hi ^ 5) · 0x9E3779B9)): element 0 0xb5b92835, 1 0x5cb0dedf, 2 0x5db94690,
// 3 0x057fb7f9, 4 0x40259414, 5 0x24abb815, 6 0xae16f41b, 7 0x8ec14514; 2^32 - 2 0x6b44409b,
// 2^32 - 1 0x70fb2f43, 2^32 0x60180d25, 2^32 + 1 0xb6b93105.
TEST(DropoutMask, HandWorkedFates) {
  const cpu::DropoutMask mask(0.5f, 0x0000000500000003ULL);
  const bool kept[8] = {true, false, false, false, false, false, true, true};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(mask(3.0f, i), kept[i] ? 6.0f : 0.0f) << "element " << i;
  const std::int64_t high = std::int64_t{1} << 32;
  EXPECT_EQ(mask(3.0f, high - 2), 0.0f);
  EXPECT_EQ(mask(3.0f, high - 1), 0.0f);
  EXPECT_EQ(mask(3.0f, high), 0.0f);
  EXPECT_EQ(mask(3.0f, high + 1), 6.0f);
}

// row() on 32-bit lanes gives each element the fate and bits the element rule gives it, in place
// or apart, for rows inside one half and rows crossing into the next.
TEST(DropoutMask, RowGivesEachElementItsOwnFate) {
  const std::int64_t high = std::int64_t{1} << 32;
  for (float p : {0.0f, 0.1f, 0.5f})
    for (std::int64_t at : {std::int64_t{0}, std::int64_t{12345}, high - 40, high - 5, high, 3 * high - 17})
      for (int n : {1, 7, 16, 33, 64}) {
        SCOPED_TRACE("p " + std::to_string(p) + ", from element " + std::to_string(at) + ", " + std::to_string(n));
        const cpu::DropoutMask mask(p, 0x9E3779B97F4A7C15ULL);
        std::vector<float> x(n), apart(n);
        for (int j = 0; j < n; ++j) x[j] = 0.25f * static_cast<float>(j + 1) * (j % 2 ? -1.0f : 1.0f);
        std::vector<float> in_place = x;
        mask.row(x.data(), apart.data(), at, n);
        mask.row(in_place.data(), in_place.data(), at, n);
        for (int j = 0; j < n; ++j) {
          const float want = mask(x[j], at + j);
          ASSERT_EQ(std::bit_cast<std::uint32_t>(apart[j]), std::bit_cast<std::uint32_t>(want)) << "element " << j;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(in_place[j]), std::bit_cast<std::uint32_t>(want)) << "in place " << j;
        }
      }
}

}  // namespace
}  // namespace attn
