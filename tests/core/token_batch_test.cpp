// The one layout of sentence pairs the model reads, against a hand-written example.
#include "core/token_batch.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

using Ids = std::vector<std::int32_t>;

TEST(PaddedBatch, PairsLaidOutWithEosBosAndPadding) {
  const std::vector<Ids> sources = {{10, 11, 12}, {20}};
  const std::vector<Ids> targets = {{30}, {40, 41, 42, 43}};
  const PaddedBatch b = pad_batch(sources, targets);
  EXPECT_EQ(b.batch, 2);
  EXPECT_EQ(b.src_len, 4);  // 3 tokens + EOS
  EXPECT_EQ(b.tgt_len, 5);  // BOS + 4 tokens, or 4 tokens + EOS
  // pad 0, BOS 2, EOS 3
  EXPECT_EQ(b.src, (Ids{10, 11, 12, 3, /**/ 20, 3, 0, 0}));
  EXPECT_EQ(b.tgt_in, (Ids{2, 30, 0, 0, 0, /**/ 2, 40, 41, 42, 43}));
  EXPECT_EQ(b.tgt_out, (Ids{30, 3, 0, 0, 0, /**/ 40, 41, 42, 43, 3}));
  EXPECT_EQ(b.src_lengths, (Ids{4, 2}));
  EXPECT_EQ(b.tgt_lengths, (Ids{2, 5}));
  EXPECT_EQ(b.src_tokens, 6);
  EXPECT_EQ(b.tgt_tokens, 7);
  const TokenBatch v = b.view();
  EXPECT_EQ(v.batch, 2);
  EXPECT_EQ(v.src_len, 4);
  EXPECT_EQ(v.tgt_len, 5);
  EXPECT_EQ(v.src, b.src.data());
  EXPECT_EQ(v.tgt_lengths, b.tgt_lengths.data());
}

TEST(PaddedBatch, SourcesOnlyAndEmptySentences) {
  const std::vector<Ids> sources = {{}, {5, 6}};
  const PaddedBatch b = pad_sources(sources);
  EXPECT_EQ(b.src_len, 3);
  EXPECT_EQ(b.src, (Ids{3, 0, 0, /**/ 5, 6, 3}));
  EXPECT_EQ(b.src_lengths, (Ids{1, 3}));
  EXPECT_EQ(b.tgt_len, 0);
  EXPECT_TRUE(b.tgt_in.empty() && b.tgt_out.empty() && b.tgt_lengths.empty());
}

TEST(PaddedBatch, ReassigningASmallerBatchLeavesNothingOfTheLargerOne) {
  PaddedBatch b = pad_batch(std::vector<Ids>{{1, 1, 1, 1}, {1}}, std::vector<Ids>{{1, 1, 1}, {1}});
  const std::vector<Ids> sources = {{7}}, targets = {{8}};
  b.assign(
      1, [&](int i) { return std::span<const std::int32_t>(sources[i]); },
      [&](int i) { return std::span<const std::int32_t>(targets[i]); });
  EXPECT_EQ(b.src, (Ids{7, 3}));
  EXPECT_EQ(b.tgt_in, (Ids{2, 8}));
  EXPECT_EQ(b.tgt_out, (Ids{8, 3}));
  EXPECT_EQ(b.src_lengths, (Ids{2}));
  EXPECT_EQ(b.tgt_lengths, (Ids{2}));
}

TEST(PaddedBatch, MismatchedSidesRefused) {
  EXPECT_THROW(pad_batch(std::vector<Ids>{{1}}, std::vector<Ids>{}), std::exception);
}

}  // namespace
}  // namespace attn
