// BLEU against independent truth: values from sacreBLEU's own test suite and README (cited per
// test, github.com/mjpost/sacrebleu), and hand-worked examples whose counts are derived in comments.
#include "eval/bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "eval/sacrebleu_format.h"

namespace attn::eval {
namespace {

using Lines = std::vector<std::string>;

// The example of sacreBLEU's README and test/test_bleu.py: three segments, two reference sets.
const Lines kHyps = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
const ReferenceSets kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
};

// sacreBLEU's compat.raw_corpus_bleu(): no tokenization, floor smoothing, effective order.
BleuOptions raw_corpus_bleu_options(double smooth_value) {
  BleuOptions options;
  options.tokenizer = BleuTokenizer::kNone;
  options.smoothing = BleuSmoothing::kFloor;
  options.smooth_value = smooth_value;
  options.effective_order = true;
  return options;
}

BleuStatistics make_statistics(std::vector<long long> matches, std::vector<long long> totals, long long hyp_len,
                               long long ref_len) {
  BleuStatistics statistics(static_cast<int>(matches.size()));
  statistics.matches = std::move(matches);
  statistics.totals = std::move(totals);
  statistics.hyp_len = hyp_len;
  statistics.ref_len = ref_len;
  return statistics;
}

// README "Using SacreBLEU from Python": str(score) and get_signature() (version there is 2.0.0).
TEST(CorpusBleu, ReadmeExampleLineAndSignature) {
  const BleuScore score = corpus_bleu(kHyps, kRefs);
  EXPECT_EQ(format_bleu(score),
            "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  EXPECT_EQ(bleu_signature(BleuOptions{}, score.nrefs),
            "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:" + std::string(kSacrebleuVersion));
}

// The same example as documented for the Hugging Face sacrebleu metric wrapper:
// {'score': 48.530827009929865, 'counts': [14, 7, 5, 3], 'totals': [17, 14, 11, 8],
//  'precisions': [82.3529411764706, 50.0, 45.45454545454545, 37.5], 'bp': 0.9428731438548749,
//  'sys_len': 17, 'ref_len': 18}
TEST(CorpusBleu, ReadmeExampleStatistics) {
  const BleuScore score = corpus_bleu(kHyps, kRefs);
  EXPECT_EQ(score.counts, (std::vector<long long>{14, 7, 5, 3}));
  EXPECT_EQ(score.totals, (std::vector<long long>{17, 14, 11, 8}));
  EXPECT_DOUBLE_EQ(score.precisions[0], 82.3529411764706);
  EXPECT_DOUBLE_EQ(score.precisions[2], 45.45454545454545);
  EXPECT_DOUBLE_EQ(score.bp, 0.9428731438548749);
  EXPECT_DOUBLE_EQ(score.score, 48.530827009929865);
  EXPECT_EQ(score.hyp_len, 17);
  EXPECT_EQ(score.ref_len, 18);
}

// test/test_bleu.py, test_corpus_bleu (EPSILON 1e-8).
TEST(CorpusBleu, SacrebleuTestSuiteCorpusCases) {
  EXPECT_NEAR(corpus_bleu(kHyps, kRefs).score, 48.530827, 1e-8);
  EXPECT_EQ(corpus_bleu(Lines{"", "", ""}, kRefs).score, 0.0);  // empty hypotheses are kept
  BleuOptions none_tokenizer;
  none_tokenizer.tokenizer = BleuTokenizer::kNone;
  EXPECT_NEAR(corpus_bleu(kHyps, kRefs, none_tokenizer).score, 49.1919566, 1e-8);
  BleuOptions no_smoothing;
  no_smoothing.smoothing = BleuSmoothing::kNone;
  EXPECT_NEAR(corpus_bleu(kHyps, kRefs, no_smoothing).score, 48.530827, 1e-8);
}

// test/test_bleu.py, test_max_ngram_order.
TEST(CorpusBleu, SacrebleuTestSuiteMaxNgramOrder) {
  const std::vector<std::string> expected = {"77.65", "60.50", "53.93", "48.53", "46.14", "43.28"};
  for (int order = 1; order <= 6; ++order) {
    BleuOptions options;
    options.max_ngram_order = order;
    EXPECT_EQ(format_fixed(corpus_bleu(kHyps, kRefs, options).score, 2), expected[order - 1]) << order;
  }
}

// README "Variable Number of References": an empty reference means "none here" ("nrefs:var").
TEST(CorpusBleu, ReadmeVariableNumberOfReferences) {
  ReferenceSets refs = kRefs;
  refs[0][0] = "";
  const BleuScore score = corpus_bleu(kHyps, refs);
  EXPECT_EQ(format_bleu(score),
            "BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)");
  EXPECT_EQ(score.nrefs, kVariableReferenceCount);
  EXPECT_EQ(bleu_signature(BleuOptions{}, score.nrefs).substr(0, 11), "nrefs:var|c");
}

// test/test_bleu.py, test_raw_bleu, test_effective_order, test_statistics and test_offset, all
// through compat.raw_corpus_bleu (scores there are divided by 100).
TEST(CorpusBleu, SacrebleuTestSuiteRawCorpusBleu) {
  const BleuOptions raw = raw_corpus_bleu_options(0.01);
  EXPECT_NEAR(corpus_bleu(Lines{"this is a test", "another test"}, {{"ref1", "ref2"}}, raw).score, 0.0, 1e-6);
  EXPECT_NEAR(corpus_bleu(Lines{"this is a test"}, {{"this is a test"}}, raw).score, 100.0, 1e-6);
  EXPECT_NEAR(corpus_bleu(Lines{"this is a fest"}, {{"this is a test"}}, raw).score, 22.3606797749979, 1e-6);

  EXPECT_NEAR(corpus_bleu(Lines{"test"}, {{"a test"}}, raw).score, 36.78794411714425, 1e-6);
  EXPECT_NEAR(corpus_bleu(Lines{"a test"}, {{"a test"}}, raw).score, 100.0, 1e-6);
  EXPECT_NEAR(corpus_bleu(Lines{"a little test"}, {{"a test"}}, raw).score, 3.218297948685433, 1e-6);

  const Lines hyp = {"am I am a character sequence"};
  const ReferenceSets ref = {{"I am a symbol string sequence a a"}};
  const BleuScore stats = corpus_bleu(hyp, ref, raw);
  EXPECT_EQ(stats.counts, (std::vector<long long>{4, 2, 1, 0}));
  EXPECT_EQ(stats.totals, (std::vector<long long>{6, 5, 4, 3}));
  EXPECT_NEAR(corpus_bleu(hyp, ref, raw_corpus_bleu_options(0.0)).score, 0.0, 1e-6);
  BleuOptions default_floor = raw_corpus_bleu_options(0.1);
  default_floor.smooth_value.reset();  // floor's default, 0.1
  EXPECT_NEAR(corpus_bleu(hyp, ref, default_floor).score, 15.55722182, 1e-6);
}

// test/test_bleu.py, test_scoring (compute_bleu's default smoothing is none) and
// test_degenerate_statistics (floor smoothing).
TEST(ComputeBleu, SacrebleuTestSuiteStatistics) {
  BleuOptions none;
  none.smoothing = BleuSmoothing::kNone;
  EXPECT_NEAR(compute_bleu(make_statistics({9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11), none).score, 83.75922397, 1e-6);

  struct Degenerate {
    std::vector<long long> matches, totals;
    long long hyp_len, ref_len;
    double floor;
  };
  const std::vector<Degenerate> cases = {
      {{0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1, 0.0}, {{0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10, 0.0},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.0}, {{6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6, 0.0},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.1}, {{0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5, 0.01}};
  for (const Degenerate& c : cases) {
    BleuOptions floor;
    floor.smoothing = BleuSmoothing::kFloor;
    floor.smooth_value = c.floor;
    EXPECT_EQ(compute_bleu(make_statistics(c.matches, c.totals, c.hyp_len, c.ref_len), floor).score, 0.0);
  }
}

// test/test_sentence_bleu.py (EPSILON 1e-3): sentence BLEU with effective order, 13a or none.
TEST(SentenceBleu, SacrebleuTestSuiteSmoothing) {
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::string sys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
  struct Case {
    BleuSmoothing smoothing;
    std::optional<double> value;
    BleuTokenizer tokenizer;
    double expected;
  };
  const std::vector<Case> cases = {
      {BleuSmoothing::kExp, {}, BleuTokenizer::k13a, 8.493},
      {BleuSmoothing::kNone, {}, BleuTokenizer::k13a, 0.0},
      {BleuSmoothing::kFloor, {}, BleuTokenizer::k13a, 4.51688},
      {BleuSmoothing::kFloor, 0.1, BleuTokenizer::k13a, 4.51688},
      {BleuSmoothing::kFloor, 0.5, BleuTokenizer::k13a, 10.10},
      {BleuSmoothing::kAddK, {}, BleuTokenizer::k13a, 14.882},
      {BleuSmoothing::kAddK, 1, BleuTokenizer::k13a, 14.882},
      {BleuSmoothing::kAddK, 2, BleuTokenizer::k13a, 21.389},
      {BleuSmoothing::kExp, {}, BleuTokenizer::kNone, 7.347},
  };
  for (const Case& c : cases) {
    BleuOptions options = sentence_bleu_options();
    options.smoothing = c.smoothing;
    options.smooth_value = c.value;
    options.tokenizer = c.tokenizer;
    EXPECT_NEAR(sentence_bleu(sys, std::vector<std::string>{ref}, options).score, c.expected, 1e-3);
  }
  // No match at all gives 0 whatever the smoothing (#141).
  for (BleuSmoothing smoothing :
       {BleuSmoothing::kExp, BleuSmoothing::kNone, BleuSmoothing::kFloor, BleuSmoothing::kAddK}) {
    BleuOptions options = sentence_bleu_options();
    options.smoothing = smoothing;
    EXPECT_EQ(sentence_bleu("this is a cat", std::vector<std::string>{"okay thanks"}, options).score, 0.0);
  }
}

// Hand-worked, one reference:
//   hyp "the cat sat on the mat"  ref "the cat is on the mat"  (6 tokens each, BP = 1)
//   1-grams: the×2 cat sat on mat vs the×2 cat is on mat      -> 5/6
//   2-grams: the_cat cat_sat sat_on on_the the_mat             -> the_cat on_the the_mat: 3/5
//   3-grams: the_cat_sat cat_sat_on sat_on_the on_the_mat      -> on_the_mat: 1/4
//   4-grams: the_cat_sat_on cat_sat_on_the sat_on_the_mat      -> 0/3
// exp smoothing: the first zero order becomes 100 / (2 * 3) = 16.67, so
// BLEU = (83.33 * 60 * 25 * 16.67) ^ (1/4) = 2083333.33 ^ (1/4) = 37.9918.
TEST(CorpusBleu, HandWorkedOneReference) {
  const Lines hyp = {"the cat sat on the mat"};
  const ReferenceSets ref = {{"the cat is on the mat"}};
  const BleuScore exp = corpus_bleu(hyp, ref);
  EXPECT_EQ(exp.counts, (std::vector<long long>{5, 3, 1, 0}));
  EXPECT_EQ(exp.totals, (std::vector<long long>{6, 5, 4, 3}));
  EXPECT_NEAR(exp.score, 37.99178428257963, 1e-10);
  EXPECT_EQ(format_bleu(exp), "BLEU = 37.99 83.3/60.0/25.0/16.7 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");

  BleuOptions options;
  options.smoothing = BleuSmoothing::kNone;  // the zero 4-gram precision zeroes the score
  EXPECT_EQ(corpus_bleu(hyp, ref, options).score, 0.0);
  options.smoothing = BleuSmoothing::kFloor;  // 4-grams: 100 * 0.1 / 3 = 3.33; (83.33*60*25*3.33)^(1/4)
  EXPECT_NEAR(corpus_bleu(hyp, ref, options).score, 25.406637407730738, 1e-10);
  EXPECT_EQ(bleu_signature(options, 1),
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:" + std::string(kSacrebleuVersion));
  options.smoothing = BleuSmoothing::kAddK;  // orders 2-4 get +1: 4/6, 2/5, 1/4; (83.33*66.67*40*25)^(1/4)
  EXPECT_NEAR(corpus_bleu(hyp, ref, options).score, 48.54917717073234, 1e-10);
  EXPECT_EQ(bleu_signature(options, 1).find("smooth:add-k[1.00]") != std::string::npos, true);
}

// Hand-worked, two references: hyp "a b c d e" (5 tokens), refs "a b c d" (4) and "a b c d e f" (6).
// Both are 1 token away; the tie goes to the shorter, so ref_len = 4 and BP = 1 (ratio 1.25). The
// reference n-grams are the union with max counts, so every hypothesis n-gram matches.
TEST(CorpusBleu, HandWorkedClosestReferenceTieGoesToShorter) {
  const BleuScore score = corpus_bleu(Lines{"a b c d e"}, {{"a b c d"}, {"a b c d e f"}});
  EXPECT_EQ(format_bleu(score),
            "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.250 hyp_len = 5 ref_len = 4)");
}

// Hand-worked, clipping by the maximum count over references:
//   hyp "the the the", refs "the cat" and "the the dog" (closest length 3)
//   1-grams: the×3, clipped at max(1, 2) = 2          -> 2/3
//   2-grams: the_the×2, only the second ref has one    -> 1/2
//   3-grams: the_the_the                               -> 0/1, exp: 100 / (2 * 1) = 50
//   4-grams: none, so the loop stops there.
// Corpus BLEU keeps order 4 with precision 0 and scores 0; with effective order the mean runs over
// three orders: (66.67 * 50 * 50) ^ (1/3) = 55.0321.
TEST(CorpusBleu, HandWorkedClippingAndEffectiveOrder) {
  const Lines hyp = {"the the the"};
  const ReferenceSets refs = {{"the cat"}, {"the the dog"}};
  const BleuScore corpus = corpus_bleu(hyp, refs);
  EXPECT_EQ(corpus.counts, (std::vector<long long>{2, 1, 0, 0}));
  EXPECT_EQ(corpus.score, 0.0);
  EXPECT_EQ(format_bleu(corpus), "BLEU = 0.00 66.7/50.0/50.0/0.0 (BP = 1.000 ratio = 1.000 hyp_len = 3 ref_len = 3)");

  const std::vector<std::string> sentence_refs = {"the cat", "the the dog"};
  const BleuScore sentence = sentence_bleu("the the the", sentence_refs);
  EXPECT_NEAR(sentence.score, 55.032120814910435, 1e-10);
  EXPECT_EQ(bleu_signature(sentence_bleu_options(), 2).substr(0, 30), "nrefs:2|case:mixed|eff:yes|tok");
}

// Hand-worked: an empty hypothesis has no tokens, so BP = 0 (sacreBLEU: 0.0 when sys_len is 0).
TEST(CorpusBleu, HandWorkedEmptyHypothesis) {
  const BleuScore score = corpus_bleu(Lines{""}, {{"a b"}});
  EXPECT_EQ(format_bleu(score), "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 2)");
}

// Hand-worked: U+00A0, U+2009 and U+3000 split tokens exactly like spaces (Python's str.split()),
// so these tokenize identically to "le chat noir est sur le tapis" and score 100.
TEST(CorpusBleu, HandWorkedUnicodeWhitespace) {
  const BleuScore score =
      corpus_bleu(Lines{"le\u00A0chat noir\u2009est sur\u3000le tapis"}, {{"le chat noir est sur le tapis"}});
  EXPECT_EQ(score.hyp_len, 7);
  EXPECT_NEAR(score.score, 100.0, 1e-9);  // exp(log(100)) is 100 only to rounding, in Python too
}

// Hand-worked: 13a keeps "3.14" and "1,000" whole and splits the sentence-final period, so
// "costs 1,000 or 3.14." and "costs 1,000 or 3.14 ." are the same 5 tokens (100), while the
// reference "costs 1 , 000 or 3 . 14 ." shares only "costs", "or", "." with it:
//   1-grams 3/5, 2-grams 0/4 -> exp smoothing 100/(2*4), 3-grams 100/(4*3), 4-grams 100/(8*2);
//   hyp 5 tokens vs ref 9: BP = exp(1 - 9/5).
TEST(CorpusBleu, HandWorkedNumbersAndPunctuation) {
  EXPECT_NEAR(corpus_bleu(Lines{"costs 1,000 or 3.14."}, {{"costs 1,000 or 3.14 ."}}).score, 100.0, 1e-9);
  const BleuScore split = corpus_bleu(Lines{"costs 1,000 or 3.14."}, {{"costs 1 , 000 or 3 . 14 ."}});
  EXPECT_EQ(split.counts, (std::vector<long long>{3, 0, 0, 0}));
  const double expected =
      std::exp(1.0 - 9.0 / 5.0) * std::pow(60.0 * (100.0 / 8.0) * (100.0 / 12.0) * (100.0 / 16.0), 0.25);
  EXPECT_NEAR(split.score, expected, 1e-10);
}

// Hand-worked: &quot; &amp; &lt; &gt; are unescaped before tokenizing, so these are the same tokens.
TEST(CorpusBleu, HandWorkedEntities) {
  EXPECT_NEAR(corpus_bleu(Lines{"&quot;Yes&quot; &amp; no &lt;b&gt; today"}, {{"\"Yes\" & no <b> today"}}).score, 100.0,
              1e-9);
}

// Hand-worked: case matters unless lowercase is on (Python str.lower(), so "À" and "É" too).
TEST(CorpusBleu, HandWorkedLowercase) {
  const Lines hyp = {"L'\u00C9T\u00C9 \u00C0 PARIS EST CHAUD"};
  const ReferenceSets ref = {{"l'\u00E9t\u00E9 \u00E0 paris est chaud"}};
  EXPECT_EQ(corpus_bleu(hyp, ref).score, 0.0);
  BleuOptions lowercase;
  lowercase.lowercase = true;
  EXPECT_NEAR(corpus_bleu(hyp, ref, lowercase).score, 100.0, 1e-9);
  EXPECT_EQ(bleu_signature(lowercase, 1).substr(0, 16), "nrefs:1|case:lc|");
}

TEST(BleuScorer, ScoresManyHypothesisSetsAgainstOnePreparation) {
  BleuScorer scorer(kRefs);
  EXPECT_EQ(scorer.segment_count(), 3u);
  EXPECT_EQ(scorer.nrefs(), 2);
  EXPECT_NEAR(scorer.score(kHyps).score, 48.530827, 1e-8);
  BleuScorer moved = std::move(scorer);  // the prepared n-grams stay valid
  EXPECT_NEAR(moved.score(kHyps).score, 48.530827, 1e-8);
  EXPECT_EQ(moved.score(Lines{"", "", ""}).score, 0.0);
}

TEST(BleuScorer, RejectsMismatchedInput) {
  EXPECT_THROW(corpus_bleu(Lines{"a"}, {{"a", "b"}}), Error);
  EXPECT_THROW(corpus_bleu(Lines{"a", "b"}, {{"a", "b"}, {"a"}}), Error);
  EXPECT_THROW(corpus_bleu(Lines{"a"}, {{""}}), Error);  // sacreBLEU: "Empty or `None` reference"
  EXPECT_THROW(corpus_bleu(Lines{"a"}, ReferenceSets{}), Error);
}

}  // namespace
}  // namespace attn::eval
