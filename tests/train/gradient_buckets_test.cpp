// The overlapped sum's parts (train/gradient_buckets.h), worked by hand on a gradient of 20 floats
// (element i holds i) with buckets of at most 5 floats: each part the backward pass calls final
// goes at once, from the buffer's end, in sums of at most a bucket; the part summed apart goes when
// it is called final; the earlier batches' gradient is added to each part just before it goes.
#include "train/gradient_buckets.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/backend.h"
#include "train/fake_ranks.h"

namespace attn {
namespace {

std::vector<float> range(int begin, int end, float plus = 0) {
  std::vector<float> x(static_cast<std::size_t>(end - begin));
  std::iota(x.begin(), x.end(), static_cast<float>(begin) + plus);
  return x;
}

TEST(GradientBuckets, EachPartCalledFinalGoesAtOnceInSumsOfAtMostABucket) {
  testing::TwoRanks ranks;
  ranks.other_sends_zeros = true;
  std::vector<float> grads = range(0, 20);
  GradientBuckets buckets(ranks, cpu_backend(), grads.data(), 20, 5, dist::WirePrecision::fp32, nullptr, 4);
  buckets.final_from(14);  // the last layer: [14, 20)
  ASSERT_EQ(ranks.sent.size(), 2u);
  EXPECT_EQ(ranks.sent[0], range(15, 20));
  EXPECT_EQ(ranks.sent[1], range(14, 15)) << "what is final goes, however little";
  buckets.final_apart();  // [0, 4): the part done before the rest
  ASSERT_EQ(ranks.sent.size(), 3u);
  EXPECT_EQ(ranks.sent[2], range(0, 4));
  buckets.final_from(6);
  ASSERT_EQ(ranks.sent.size(), 5u);
  EXPECT_EQ(ranks.sent[3], range(9, 14));
  EXPECT_EQ(ranks.sent[4], range(6, 9));
  buckets.finish();  // [4, 6) is left; [0, 4) has gone
  ASSERT_EQ(ranks.sent.size(), 6u);
  EXPECT_EQ(ranks.sent[5], range(4, 6));
  EXPECT_EQ(buckets.sums(), 6);
}

TEST(GradientBuckets, TheEarlierBatchesGradientIsAddedToEachPartBeforeItGoes) {
  testing::TwoRanks ranks;
  ranks.other_sends_zeros = true;
  std::vector<float> grads = range(0, 12), earlier(12, 100.0f);
  GradientBuckets buckets(ranks, cpu_backend(), grads.data(), 12, 5, dist::WirePrecision::fp32, earlier.data(), 3);
  buckets.final_from(8);
  EXPECT_EQ(grads, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 108, 109, 110, 111})) << "only the part that went";
  buckets.finish();  // [3, 8) in one sum, then [0, 3): the part apart goes last where never called final
  ASSERT_EQ(ranks.sent.size(), 3u);
  EXPECT_EQ(ranks.sent[0], range(8, 12, 100));
  EXPECT_EQ(ranks.sent[1], range(3, 8, 100));
  EXPECT_EQ(ranks.sent[2], range(0, 3, 100));
}

TEST(GradientBuckets, WithoutAPartApartTheWholeBufferGoesFromItsEnd) {
  testing::TwoRanks ranks;
  ranks.other_sends_zeros = true;
  std::vector<float> grads = range(0, 7);
  GradientBuckets buckets(ranks, cpu_backend(), grads.data(), 7, 3, dist::WirePrecision::fp32);
  buckets.finish();
  ASSERT_EQ(ranks.sent.size(), 3u);
  EXPECT_EQ(ranks.sent[0], range(4, 7));
  EXPECT_EQ(ranks.sent[1], range(1, 4));
  EXPECT_EQ(ranks.sent[2], range(0, 1));
}

}  // namespace
}  // namespace attn
