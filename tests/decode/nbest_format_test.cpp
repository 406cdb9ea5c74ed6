// Moses' n-best lines of `attn translate --n-best`, for hand-made hypotheses with the text
// written out by hand: "sentence ||| text ||| score", the score as a stream writes a double.
#include "decode/nbest_format.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

Hypothesis scored(double score) {
  Hypothesis h;
  h.score = score;
  return h;
}

TEST(NBestFormat, OneLinePerHypothesisInTheGivenOrder) {
  EXPECT_EQ(format_nbest(3, {"el gato", "gato el", "el"}, {scored(-0.5), scored(-1.25), scored(-2.0 / 3.0)}),
            "3 ||| el gato ||| -0.5\n"
            "3 ||| gato el ||| -1.25\n"
            "3 ||| el ||| -0.666667\n");
}

TEST(NBestFormat, ScoresKeepSixSignificantDigits) {
  EXPECT_EQ(format_nbest(0, {"a", "b", "c"}, {scored(0), scored(-12), scored(-1234567.0)}),
            "0 ||| a ||| 0\n"
            "0 ||| b ||| -12\n"
            "0 ||| c ||| -1.23457e+06\n");
}

TEST(NBestFormat, AnEmptyTranslationKeepsItsFieldsAndNoHypothesesGiveNoLines) {
  EXPECT_EQ(format_nbest(12, {""}, {scored(-0.25)}), "12 |||  ||| -0.25\n");
  EXPECT_EQ(format_nbest(7, {}, {}), "");
}

}  // namespace
}  // namespace attn
