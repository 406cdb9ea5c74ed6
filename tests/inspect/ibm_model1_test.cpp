// IBM Model 1 on the classic two-sentence corpus, EM worked by hand, and EM's invariant.
#include "inspect/ibm_model1.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn::inspect {
namespace {

using Corpus = std::vector<std::vector<std::string>>;

// Source (French) "la maison", "la fleur"; target (English) "the house", "the flower".
const Corpus kSource = {{"la", "maison"}, {"la", "fleur"}};
const Corpus kTarget = {{"the", "house"}, {"the", "flower"}};

IbmModel1 train(int iterations, std::vector<double>* log_likelihoods = nullptr) {
  IbmModel1Options options;
  options.iterations = iterations;
  return IbmModel1::train(kSource, kTarget, options, log_likelihoods);
}

TEST(IbmModel1, SplitsAtSpacesAndTabs) {
  EXPECT_EQ(split_words("  la\tmaison  bleue "), (std::vector<std::string>{"la", "maison", "bleue"}));
  EXPECT_TRUE(split_words("").empty());
}

// Start: t = 1/3 (three target words) for every pair, NULL included.
// Iteration 1, E step: each target word spreads 1/3 to each of NULL, la and the noun, so
//   counts NULL: the 2/3, house 1/3, flower 1/3 (total 4/3); la: the same; maison: the 1/3, house 1/3
//   (total 2/3); fleur: the 1/3, flower 1/3.
// M step: t(the|la) = 1/2, t(house|la) = t(flower|la) = 1/4, t(house|maison) = t(the|maison) = 1/2.
TEST(IbmModel1, FirstIterationByHand) {
  const IbmModel1 model = train(1);
  EXPECT_NEAR(model.probability("the", "la"), 0.5, 1e-15);
  EXPECT_NEAR(model.probability("house", "la"), 0.25, 1e-15);
  EXPECT_NEAR(model.probability("flower", "la"), 0.25, 1e-15);
  EXPECT_NEAR(model.null_probability("the"), 0.5, 1e-15);
  EXPECT_NEAR(model.probability("house", "maison"), 0.5, 1e-15);
  EXPECT_NEAR(model.probability("the", "maison"), 0.5, 1e-15);
  EXPECT_EQ(model.probability("flower", "maison"), 0.0);  // never in one sentence pair
  EXPECT_EQ(model.probability("house", "chien"), 0.0);    // unknown word
}

// Iteration 2, sentence 1: "the" has t = 1/2 from NULL, la and maison (denominator 3/2: 1/3 each);
// "house" has 1/4, 1/4, 1/2 (denominator 1: shares 1/4, 1/4, 1/2). Sentence 2 likewise.
//   la: the 2/3, house 1/4, flower 1/4 (total 7/6) → t(the|la) = 4/7, t(house|la) = 3/14
//   maison: the 1/3, house 1/2 (total 5/6)       → t(the|maison) = 2/5, t(house|maison) = 3/5
TEST(IbmModel1, SecondIterationByHand) {
  const IbmModel1 model = train(2);
  EXPECT_NEAR(model.probability("the", "la"), 4.0 / 7.0, 1e-15);
  EXPECT_NEAR(model.probability("house", "la"), 3.0 / 14.0, 1e-15);
  EXPECT_NEAR(model.null_probability("the"), 4.0 / 7.0, 1e-15);
  EXPECT_NEAR(model.probability("the", "maison"), 2.0 / 5.0, 1e-15);
  EXPECT_NEAR(model.probability("house", "maison"), 3.0 / 5.0, 1e-15);
  EXPECT_NEAR(model.probability("flower", "fleur"), 3.0 / 5.0, 1e-15);
}

// The log-likelihood Σ_j log(Σ_i t(f_j|e_i) / 3): at the start every word has (3 · 1/3)/3 = 1/3,
// so 4·log(1/3); after one iteration "the" has (3 · 1/2)/3 = 1/2 and the nouns (1/4 + 1/4 + 1/2)/3
// = 1/3, so 2·(log(1/2) + log(1/3)).
TEST(IbmModel1, LogLikelihoodByHand) {
  std::vector<double> log_likelihoods;
  train(1, &log_likelihoods);
  ASSERT_EQ(log_likelihoods.size(), 2u);
  EXPECT_NEAR(log_likelihoods[0], 4 * std::log(1.0 / 3.0), 1e-12);
  EXPECT_NEAR(log_likelihoods[1], 2 * (std::log(0.5) + std::log(1.0 / 3.0)), 1e-12);
}

TEST(IbmModel1, EmConvergesToTheExpectedLinks) {
  const IbmModel1 model = train(5);
  EXPECT_GT(model.probability("house", "maison"), model.probability("house", "la"));
  EXPECT_GT(model.probability("flower", "fleur"), model.probability("flower", "la"));
  EXPECT_GT(model.probability("the", "la"), model.probability("the", "maison"));
  // t(the|la) = t(the|NULL) exactly (la and NULL are in every sentence): the tie goes to la.
  EXPECT_EQ(format_pharaoh(model.viterbi({"la", "maison"}, {"the", "house"})), "0-0 1-1");
  EXPECT_EQ(format_pharaoh(model.viterbi({"la", "fleur"}, {"the", "flower"})), "0-0 1-1");
  // Unknown words and empty sentences get no links.
  EXPECT_EQ(format_pharaoh(model.viterbi({"la", "maison"}, {"the", "dog"})), "0-0");
  EXPECT_EQ(format_pharaoh(model.viterbi({}, {"the"})), "");
}

TEST(IbmModel1, NullTakesTargetWordsNoSourceWordExplains) {
  const Corpus source = {{"a"}, {"a"}, {"b"}};
  const Corpus target = {{"x", "z"}, {"x", "z"}, {"y", "z"}};
  IbmModel1Options options;
  const IbmModel1 model = IbmModel1::train(source, target, options);
  // z occurs in every target sentence, so NULL (in every source sentence) explains it better than
  // a (2 of 3) or b (1 of 3).
  EXPECT_GT(model.null_probability("z"), model.probability("z", "a"));
  EXPECT_EQ(format_pharaoh(model.viterbi({"a"}, {"x", "z"})), "0-0");
}

TEST(IbmModel1, LogLikelihoodNeverDecreases) {
  const Corpus source = {{"das", "haus"},
                         {"das", "buch"},
                         {"ein", "buch"},
                         {"ein", "haus", "ist", "klein"},
                         {"das", "haus", "ist", "klein"},
                         {"klein", "ist", "das", "buch"}};
  const Corpus target = {{"the", "house"},
                         {"the", "book"},
                         {"a", "book"},
                         {"a", "house", "is", "small"},
                         {"the", "house", "is", "small"},
                         {"small", "is", "the", "book"}};
  IbmModel1Options options;
  options.iterations = 20;
  std::vector<double> log_likelihoods;
  const IbmModel1 model = IbmModel1::train(source, target, options, &log_likelihoods);
  ASSERT_EQ(log_likelihoods.size(), 21u);
  for (std::size_t k = 1; k < log_likelihoods.size(); ++k) {
    EXPECT_GE(log_likelihoods[k], log_likelihoods[k - 1] - 1e-12) << k;
  }
  EXPECT_GT(log_likelihoods.back(), log_likelihoods.front());
  EXPECT_EQ(format_pharaoh(model.viterbi({"das", "buch"}, {"the", "book"})), "0-0 1-1");
}

}  // namespace
}  // namespace attn::inspect
