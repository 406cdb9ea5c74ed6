// The closing lines of `attn translate` on stderr for given counts, worked by hand: sentences per
// second and target tokens per second from the summed statistics, the search's beam and alpha,
// and with a shortlist the output pieces per batch (rounded down).
#include "decode/translation_summary.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

TEST(TranslationSummary, StatisticsAddUpFieldByField) {
  BatchStatistics total{3, 10, 12, 0.5, 1, 100};
  add_statistics(total, BatchStatistics{2, 5, 8, 0.25, 2, 50});
  EXPECT_EQ(total.sentences, 5);
  EXPECT_EQ(total.source_tokens, 15);
  EXPECT_EQ(total.target_tokens, 20);
  EXPECT_DOUBLE_EQ(total.seconds, 0.75);
  EXPECT_EQ(total.batches, 3);
  EXPECT_EQ(total.output_rows, 150);
}

TEST(TranslationSummary, RatesBeamAndAlpha) {
  // 5 sentences in 0.75 s: 6.67 per second; 20 target tokens: 26.7 per second.
  const BatchStatistics total{5, 15, 20, 0.75, 3, 150};
  SearchOptions search;
  search.beam_size = 4;
  search.length_penalty = 0.6f;
  EXPECT_EQ(translation_summary(total, 7, search),
            "translated 5 sentences (7 lines) in 0.75 s: 6.7 sentences/s, 27 target tokens/s (beam 4, alpha 0.60)\n");
}

TEST(TranslationSummary, NothingTranslatedInNoTimeDividesByNoZero) {
  SearchOptions search;
  search.beam_size = 1;
  search.length_penalty = 0;
  EXPECT_EQ(translation_summary(BatchStatistics{}, 2, search),
            "translated 0 sentences (2 lines) in 0.00 s: 0.0 sentences/s, 0 target tokens/s (beam 1, alpha 0.00)\n");
}

TEST(TranslationSummary, ShortlistPiecesPerBatchRoundDown) {
  EXPECT_EQ(shortlist_summary(BatchStatistics{5, 15, 20, 0.75, 3, 150}, 100),
            "shortlist: 50 output pieces per batch on average (k 100, 3 batches)\n");
  EXPECT_EQ(shortlist_summary(BatchStatistics{1, 1, 1, 1, 4, 10}, 7),
            "shortlist: 2 output pieces per batch on average (k 7, 4 batches)\n");
  EXPECT_EQ(shortlist_summary(BatchStatistics{}, 100),
            "shortlist: 0 output pieces per batch on average (k 100, 0 batches)\n");
}

}  // namespace
}  // namespace attn
