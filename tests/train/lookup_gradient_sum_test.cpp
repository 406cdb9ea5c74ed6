// The embedding lookups' gradient summed apart (train/lookup_gradient_sum.h), against hand-worked
// sums: only the rows some batch (of any rank) looks up reach the embedding's gradient, a batch's
// lookups are taken and zeroed, the sum is zero again for the next update, and with two ranks the
// rows travel packed, the union of both ranks' rows in row order.
#include "train/lookup_gradient_sum.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/token_batch.h"
#include "kernels/backend.h"
#include "train/fake_ranks.h"

namespace attn {
namespace {

constexpr int kVocab = 6, kDim = 2;

// One sentence whose source and decoder input look up `ids` (split as given).
struct Lookups {
  std::vector<std::int32_t> src, tgt_in, lengths_s, lengths_t;
  TokenBatch view() const {
    return {1,
            static_cast<int>(src.size()),
            static_cast<int>(tgt_in.size()),
            src.data(),
            lengths_s.data(),
            tgt_in.data(),
            tgt_in.data(),
            lengths_t.data()};
  }
};
Lookups sentence(std::vector<std::int32_t> src, std::vector<std::int32_t> tgt_in) {
  const auto s = static_cast<std::int32_t>(src.size()), t = static_cast<std::int32_t>(tgt_in.size());
  return {std::move(src), std::move(tgt_in), {s}, {t}};
}

// A [vocab, dim] buffer with the rows given (row, value of both columns), zero elsewhere.
std::vector<float> rows(std::initializer_list<std::pair<int, float>> values) {
  std::vector<float> x(kVocab * kDim, 0.0f);
  for (const auto& [row, v] : values) x[row * kDim] = x[row * kDim + 1] = v;
  return x;
}

TEST(LookupGradientSum, OneRankAddsItsBatchesSumToTheRowsTheyLookUpOnly) {
  Backend& be = cpu_backend();
  const auto ranks = dist::single_process();
  LookupGradientSum sum(be, kVocab, kDim);
  const Lookups a = sentence({1, 2}, {2}), b = sentence({4}, {1});
  const std::vector<TokenBatch> batches{a.view(), b.view()};
  sum.begin_update(batches);
  EXPECT_EQ(sum.rows(), 3);
  std::vector<float> first = rows({{1, 0.5f}, {2, -1.0f}}), second = rows({{4, 2.0f}, {1, 0.25f}});
  sum.add_batch(first.data());
  EXPECT_EQ(first, rows({})) << "a batch's lookups are taken and zeroed";
  sum.add_batch(second.data());
  EXPECT_EQ(second, rows({}));
  // The embedding's gradient: 10 everywhere (the output layer's part); rows 0, 3 and 5 untouched.
  std::vector<float> grads(kVocab * kDim, 10.0f);
  sum.add_to(grads.data(), *ranks, dist::WirePrecision::fp32);
  std::vector<float> want(kVocab * kDim, 10.0f);
  for (int c = 0; c < kDim; ++c) want[1 * kDim + c] = 10.75f, want[2 * kDim + c] = 9.0f, want[4 * kDim + c] = 12.0f;
  EXPECT_EQ(grads, want);
  // The next update starts from a zero sum.
  const Lookups c = sentence({1}, {5});
  sum.begin_update(std::vector<TokenBatch>{c.view()});
  std::vector<float> third = rows({{5, 1.0f}}), next(kVocab * kDim, 0.0f);
  sum.add_batch(third.data());
  sum.add_to(next.data(), *ranks, dist::WirePrecision::fp32);
  EXPECT_EQ(next, rows({{5, 1.0f}})) << "the last update's rows 1, 2, 4 left in the sum";
}

TEST(LookupGradientSum, TwoRanksSendTheRowsEitherLooksUpPackedInRowOrder) {
  Backend& be = cpu_backend();
  testing::TwoRanks ranks;
  LookupGradientSum sum(be, kVocab, kDim);
  const Lookups mine = sentence({1, 3}, {3});
  sum.begin_update(std::vector<TokenBatch>{mine.view()});
  // Rank 1 looks up rows 3 and 4, and sends its sums over rows 1, 3, 4 (3: 1.5, 4: -2).
  ranks.other.push_back({0, 0, 0, 1, 1, 0});
  ranks.other.push_back({0, 0, 1.5f, 1.5f, -2, -2});
  sum.start_rows(ranks);
  std::vector<float> lookups = rows({{1, 0.5f}, {3, 1.0f}});
  sum.add_batch(lookups.data());
  std::vector<float> grads(kVocab * kDim, 0.0f);
  sum.add_to(grads.data(), ranks, dist::WirePrecision::fp32);
  ASSERT_EQ(ranks.sent.size(), 2u);
  EXPECT_EQ(ranks.sent[0], (std::vector<float>{0, 1, 0, 1, 0, 0})) << "the rows rank 0 looks up, as flags";
  EXPECT_EQ(ranks.sent[1], (std::vector<float>{0.5f, 0.5f, 1, 1, 0, 0})) << "rows 1, 3, 4 of rank 0's sum";
  EXPECT_EQ(grads, rows({{1, 0.5f}, {3, 2.5f}, {4, -2.0f}}));
}

TEST(LookupGradientSum, SeveralRanksNeedTheRowsSummedFirst) {
  Backend& be = cpu_backend();
  testing::TwoRanks ranks;
  LookupGradientSum sum(be, kVocab, kDim);
  const Lookups mine = sentence({1}, {2});
  sum.begin_update(std::vector<TokenBatch>{mine.view()});
  std::vector<float> grads(kVocab * kDim, 0.0f);
  EXPECT_THROW(sum.add_to(grads.data(), ranks, dist::WirePrecision::fp32), Error);
}

}  // namespace
}  // namespace attn
