// chrF against independent truth: values from sacreBLEU's test/test_chrf.py and README (cited per
// test, github.com/mjpost/sacrebleu), and hand-worked examples whose counts are derived in comments.
#include "eval/chrf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eval/sacrebleu_format.h"

namespace attn::eval {
namespace {

using Lines = std::vector<std::string>;

struct ChrfCase {
  Lines hyps;
  Lines refs;
  double expected;
};

// compat.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, ...), as test_chrf.py calls it.
double chrf_beta3(const ChrfCase& c, bool eps_smoothing, bool whitespace) {
  ChrfOptions options;
  options.beta = 3;
  options.eps_smoothing = eps_smoothing;
  options.whitespace = whitespace;
  return corpus_chrf(c.hyps, {c.refs}, options).score;
}

// test/test_chrf.py, test_chrf (epsilon smoothing, EPSILON 1e-4).
TEST(CorpusChrf, SacrebleuTestSuiteEpsilonSmoothing) {
  const std::vector<ChrfCase> cases = {
      {{"abcdefg"}, {"hijklmnop"}, 0.0},
      {{"a"}, {"b"}, 0.0},
      {{""}, {"b"}, 0.0},
      {{""}, {"ref"}, 0.0},
      {{""}, {"reference"}, 0.0},
      {{"aa"}, {"ab"}, 8.3333},
      {{"a", "b"}, {"a", "c"}, 8.3333},
      {{"a"}, {"a"}, 16.6667},
      {{"a b c"}, {"a b c"}, 50.0},
      {{"a b c"}, {"abc"}, 50.0},
      {{" risk assessment must be made of those who are qualified and expertise in the sector - these are the "
        "scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
        "scientists ."},
       63.361730},
      {{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       64.1302698},
      {{"Niemand hat die Absicht, eine Mauer zu errichten"},
       {"Niemand hat die Absicht, eine Mauer zu errichten"},
       100.0},
  };
  for (const ChrfCase& c : cases) EXPECT_NEAR(chrf_beta3(c, true, false), c.expected, 1e-4) << c.hyps[0];
}

// test/test_chrf.py, test_chrf_eff_order (sacreBLEU's default effective-order averaging).
TEST(CorpusChrf, SacrebleuTestSuiteEffectiveOrder) {
  const std::vector<ChrfCase> cases = {
      {{"a"}, {"a"}, 100.0}, {{""}, {"reference"}, 0.0},     {{"a b c"}, {"a b c"}, 100.0}, {{"a b c"}, {"abc"}, 100.0},
      {{""}, {"c"}, 0.0},    {{"a", "b"}, {"a", "c"}, 50.0}, {{"aa"}, {"ab"}, 25.0},
  };
  for (const ChrfCase& c : cases) EXPECT_NEAR(chrf_beta3(c, false, false), c.expected, 1e-4) << c.hyps[0];
}

// test/test_chrf.py, test_chrf_keep_whitespace.
TEST(CorpusChrf, SacrebleuTestSuiteKeepWhitespace) {
  const std::vector<ChrfCase> cases = {
      {{"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       67.3481606},
      {{"risk assessment must be made of those who are qualified and expertise in the sector - these are the "
        "scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
        "scientists ."},
       65.2414427},
  };
  for (const ChrfCase& c : cases) EXPECT_NEAR(chrf_beta3(c, false, true), c.expected, 1e-4) << c.hyps[0];
}

// test/test_chrf.py, test_chrf_sentence_level: sentence_chrf(hyp, refs, eps_smoothing=True), beta 2.
TEST(SentenceChrf, SacrebleuTestSuiteCzech) {
  ChrfOptions options;
  options.eps_smoothing = true;
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
       "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."},
      {"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
       "A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."},
      {"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
       "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."},
  };
  const std::vector<double> expected = {39.14078509, 31.22557079, 57.15704367};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_NEAR(sentence_chrf(pairs[i].first, std::vector<std::string>{pairs[i].second}, options).score, expected[i],
                1e-4);
  }
}

// README "Using SacreBLEU from Python": CHRF().corpus_score(sys, refs) prints "chrF2 = 59.73".
TEST(CorpusChrf, ReadmeExample) {
  const Lines hyps = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  const ReferenceSets refs = {
      {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
      {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
  };
  const ChrfScore score = corpus_chrf(hyps, refs);
  EXPECT_EQ(format_chrf(score), "chrF2 = 59.73");
  EXPECT_EQ(chrf_signature(ChrfOptions{}, score.nrefs),
            "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" + std::string(kSacrebleuVersion));
}

// Hand-worked: hyp "ab", ref "abc", chrF2.
//   order 1: hyp {a, b} 2, ref {a, b, c} 3, match 2;  order 2: hyp {ab} 1, ref {ab, bc} 2, match 1
//   order 3: the hypothesis has no 3-gram: 0 / 1 / 0;  orders 4-6: the reference has none: 0 / 0 / 0
// Averaged over the two orders both sides have: precision (1 + 1) / 2 = 1, recall (2/3 + 1/2) / 2
// = 7/12, so chrF2 = 5 * 1 * 7/12 / (4 * 1 + 7/12) = 7/11 = 63.64.
TEST(CorpusChrf, HandWorkedEffectiveOrder) {
  const ChrfScore score = corpus_chrf(Lines{"ab"}, {{"abc"}});
  ASSERT_EQ(score.statistics.size(), 6u);
  EXPECT_EQ(score.statistics[0].hyp, 2);
  EXPECT_EQ(score.statistics[0].ref, 3);
  EXPECT_EQ(score.statistics[0].match, 2);
  EXPECT_EQ(score.statistics[2].hyp, 0);
  EXPECT_EQ(score.statistics[2].ref, 1);
  EXPECT_EQ(score.statistics[3].ref, 0);
  EXPECT_NEAR(score.score, 100.0 * 7.0 / 11.0, 1e-12);
  EXPECT_EQ(format_chrf(score), "chrF2 = 63.64");
}

// Hand-worked: whitespace, Unicode included, is removed before taking character n-grams, so
// "a\u00A0b c" and "abc" are identical (100); kept ("space:yes"), they share little.
TEST(CorpusChrf, HandWorkedUnicodeWhitespace) {
  EXPECT_EQ(corpus_chrf(Lines{"a\u00A0b c"}, {{"abc"}}).score, 100.0);
  ChrfOptions keep;
  keep.whitespace = true;
  EXPECT_LT(corpus_chrf(Lines{"a\u00A0b c"}, {{"abc"}}, keep).score, 100.0);
  EXPECT_EQ(chrf_signature(keep, 1),
            "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:yes|version:" + std::string(kSacrebleuVersion));
}

// Hand-worked: n-grams are over code points, not bytes: "éé" vs "é" shares the 1-gram "é"
// (order 1: hyp 2, ref 1, match 1; order 2: the reference has none). P = 1/2, R = 1,
// chrF2 = 5 * 0.5 * 1 / (4 * 0.5 + 1) = 2.5 / 3 = 83.33.
TEST(CorpusChrf, HandWorkedCodePoints) {
  const ChrfScore score = corpus_chrf(Lines{"\u00E9\u00E9"}, {{"\u00E9"}});
  EXPECT_EQ(score.statistics[0].hyp, 2);
  EXPECT_EQ(score.statistics[1].hyp, 0);
  EXPECT_NEAR(score.score, 250.0 / 3.0, 1e-12);
}

// Hand-worked: several references; sacreBLEU keeps, per sentence, the statistics of the reference
// with the best sentence-level score, not the sum over references.
TEST(CorpusChrf, HandWorkedBestReferencePerSentence) {
  const ChrfScore score = corpus_chrf(Lines{"abc"}, {{"xyz"}, {"abc"}});
  EXPECT_EQ(score.score, 100.0);
  EXPECT_EQ(score.statistics[0].ref, 3);
  EXPECT_EQ(score.statistics[0].match, 3);
}

// Hand-worked chrF++ (word order 2): hyp "a cat," ref "a dog,".
//   characters "acat," vs "adog,": order 1 a×2 c t , vs a d o g , -> match a + , = 2 of 5 and 5;
//   orders 2-5 share nothing (4, 3, 2, 1 n-grams each side); order 6: neither has one.
//   words: "cat," loses its final ',' -> a cat , vs a dog , : 1-grams 2 of 3; 2-grams 0 of 2.
// Seven orders have n-grams on both sides; precision = recall = (2/5 + 2/3) / 7 = 16/105, and
// F2 of equal precision and recall is that value: 15.24.
TEST(CorpusChrf, HandWorkedChrfPlusPlus) {
  const ChrfScore score = corpus_chrf(Lines{"a cat,"}, {{"a dog,"}}, chrf_plus_plus_options());
  ASSERT_EQ(score.statistics.size(), 8u);
  EXPECT_EQ(score.statistics[6].hyp, 3);
  EXPECT_EQ(score.statistics[6].match, 2);
  EXPECT_EQ(score.statistics[7].hyp, 2);
  EXPECT_NEAR(score.score, 100.0 * 16.0 / 105.0, 1e-12);
  EXPECT_EQ(format_chrf(score), "chrF2++ = 15.24");
  EXPECT_EQ(chrf_signature(chrf_plus_plus_options(), 1),
            "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:" + std::string(kSacrebleuVersion));
}

// Hand-worked: Python's str.lower() makes "ΟΔΥΣΣΕΥΣ" equal to "οδυσσευς" (final sigma included).
TEST(CorpusChrf, HandWorkedLowercase) {
  const Lines hyp = {"\u039F\u0394\u03A5\u03A3\u03A3\u0395\u03A5\u03A3"};
  const ReferenceSets ref = {{"\u03BF\u03B4\u03C5\u03C3\u03C3\u03B5\u03C5\u03C2"}};
  EXPECT_EQ(corpus_chrf(hyp, ref).score, 0.0);
  ChrfOptions lowercase;
  lowercase.lowercase = true;
  EXPECT_EQ(corpus_chrf(hyp, ref, lowercase).score, 100.0);
  EXPECT_EQ(chrf_signature(lowercase, 1).substr(0, 16), "nrefs:1|case:lc|");
}

TEST(ChrfScorer, ScoresManyHypothesisSetsAgainstOnePreparation) {
  ChrfScorer scorer(ReferenceSets{{"abc", "def"}});
  ChrfScorer moved = std::move(scorer);
  EXPECT_EQ(moved.score(Lines{"abc", "def"}).score, 100.0);
  EXPECT_EQ(moved.score(Lines{"", ""}).score, 0.0);
}

}  // namespace
}  // namespace attn::eval
