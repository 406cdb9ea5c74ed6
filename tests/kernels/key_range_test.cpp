// The one mask window both attention kernels use, by hand.
#include <gtest/gtest.h>

#include "kernels/cpu/key_range.h"

namespace attn::cpu {
namespace {

TEST(KeyRange, PaddingCausalAndWindowByHand) {
  const auto range = [](int keys, int valid, int position, bool causal, int window) {
    const KeyRange r = key_range(keys, valid, position, causal, window);
    return std::pair{r.lo, r.hi};
  };
  EXPECT_EQ(range(6, 6, 2, false, 0), std::pair(0, 6));  // everything
  EXPECT_EQ(range(6, 4, 2, false, 0), std::pair(0, 4));  // keys 4 and 5 are padding
  EXPECT_EQ(range(6, 9, 2, false, 0), std::pair(0, 6));  // a length beyond the keys there are
  EXPECT_EQ(range(6, 6, 2, true, 0), std::pair(0, 3));   // the query at 2 sees 0..2
  EXPECT_EQ(range(6, 6, 3, false, 1), std::pair(2, 5));  // |3 - k| <= 1
  EXPECT_EQ(range(6, 6, 0, false, 2), std::pair(0, 3));  // the window clipped at position 0
  EXPECT_EQ(range(6, 6, 5, false, 2), std::pair(3, 6));  // and at the last key
  EXPECT_EQ(range(6, 6, 3, true, 2), std::pair(1, 4));   // causal and window together
  EXPECT_EQ(range(6, 2, 4, false, 1), std::pair(3, 2));  // the window beyond the sentence: nothing
  EXPECT_TRUE(key_range(6, 2, 4, false, 1).empty());
  EXPECT_TRUE(key_range(6, 0, 0, false, 0).empty());  // an empty sentence
}

}  // namespace
}  // namespace attn::cpu
