// Misaligned-verse detection on small made-up texts whose answers are known by construction.
#include "data/verse_alignment.h"

#include <gtest/gtest.h>

namespace attn::data {
namespace {

// Fixed thresholds, so that these tests check the rules and not the tuning for the real modules.
const AlignmentThresholds kThresholds{
    .min_similarity = 0.3, .neighbour_margin = 0.1, .min_features = 5, .max_length_ratio = 2.0};

VerseFeatures features(std::initializer_list<const char*> names) {
  return strong_number_features(std::vector<std::string>(names.begin(), names.end()));
}

// Six features of its own per verse: "v<n>.1" .. "v<n>.6".
VerseFeatures own_features(int n) {
  VerseFeatures result;
  for (int k = 1; k <= 6; ++k) {
    std::string name = "v";  // built with += rather than +: GCC 12 warns falsely (-Wrestrict) on the latter
    name += std::to_string(n);
    name += '.';
    name += std::to_string(k);
    result.push_back(std::move(name));
  }
  return strong_number_features(result);
}

AlignedVerse verse(std::string id, VerseFeatures pivot, VerseFeatures other, std::size_t pivot_length = 100,
                   std::size_t other_length = 100) {
  return {std::move(id), std::move(pivot), std::move(other), pivot_length, other_length};
}

std::vector<Misalignment> verdicts(const std::vector<AlignedVerse>& verses) {
  std::vector<Misalignment> result;
  for (const auto& judgement : judge_alignment(verses, kThresholds)) result.push_back(judgement.verdict);
  return result;
}

constexpr auto ok = Misalignment::none;

TEST(VerseAlignment, DiceCoefficient) {
  EXPECT_DOUBLE_EQ(dice_similarity(features({"H1", "H2"}), features({"H1", "H2"})), 1.0);
  EXPECT_DOUBLE_EQ(dice_similarity(features({"H1", "H2", "H3"}), features({"H3", "H4", "H5"})), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(dice_similarity(features({"H1"}), features({"G1"})), 0.0);
  EXPECT_DOUBLE_EQ(dice_similarity({}, {}), 0.0);
  EXPECT_EQ(features({"H2", "H1", "H2"}), features({"H1", "H2"}));  // sorted, no repeats
}

TEST(VerseAlignment, WordFeaturesAreLowercasedWordsWithoutPunctuation) {
  EXPECT_EQ(word_features("God said, “Let there be light,” and God’s light—was."),
            (VerseFeatures{"and", "be", "god", "let", "light", "s", "said", "there", "was"}));
  EXPECT_EQ(word_features("¿Qué? ¡Señor! Moisés"), (VerseFeatures{"moisés", "qué", "señor"}));
  EXPECT_TRUE(word_features(" ... ").empty());
}

TEST(VerseAlignment, KeepsVersesThatMatch) {
  std::vector<AlignedVerse> verses;
  for (int n = 1; n <= 5; ++n) verses.push_back(verse("Gen.1." + std::to_string(n), own_features(n), own_features(n)));
  EXPECT_EQ(verdicts(verses), std::vector<Misalignment>(5, ok));
  EXPECT_DOUBLE_EQ(judge_alignment(verses, kThresholds)[2].similarity, 1.0);
}

TEST(VerseAlignment, FlagsAShiftedRun) {
  // The other module numbers verses 3-5 one higher, as RV1909 does in Jonah 2: its 3 is our 2.
  std::vector<AlignedVerse> verses;
  for (int n = 1; n <= 6; ++n) {
    const int theirs = n >= 3 && n <= 5 ? n - 1 : n;
    verses.push_back(verse("Jonah.2." + std::to_string(n), own_features(n), own_features(theirs)));
  }
  const auto judged = judge_alignment(verses, kThresholds);
  EXPECT_EQ(verdicts(verses),
            (std::vector<Misalignment>{ok, ok, Misalignment::low_similarity, Misalignment::low_similarity,
                                       Misalignment::low_similarity, ok}));
  EXPECT_DOUBLE_EQ(judged[2].neighbour_similarity, 1.0);
}

TEST(VerseAlignment, FlagsAVerseThatFitsItsNeighbourBetter) {
  // Look-alike list verses ("of the tribe of X, Y the son of Z") shifted by one: they share half
  // their features with the wrong verse, all of them with the neighbour.
  const auto tribe = [](int n) {
    return strong_number_features(
        {"tribe", "son", "of", "the", "name" + std::to_string(n), "father" + std::to_string(n)});
  };
  std::vector<AlignedVerse> verses{verse("Num.13.4", tribe(4), tribe(4)), verse("Num.13.5", tribe(5), tribe(6)),
                                   verse("Num.13.6", tribe(6), tribe(7)), verse("Num.13.7", tribe(8), tribe(8))};
  const auto judged = judge_alignment(verses, kThresholds);
  EXPECT_NEAR(judged[1].similarity, 8.0 / 12.0, 1e-12);
  EXPECT_EQ(verdicts(verses),
            (std::vector<Misalignment>{ok, Misalignment::fits_neighbour, Misalignment::fits_neighbour, ok}));
}

TEST(VerseAlignment, VersesTooPoorToJudgeFollowTheirNeighbours) {
  const VerseFeatures few = features({"H1", "G2"});
  std::vector<AlignedVerse> verses{
      verse("Job.40.1", own_features(1), own_features(1)), verse("Job.40.2", few, few),  // beside good ones
      verse("Job.40.3", own_features(3), own_features(3)), verse("Job.40.4", few, few),  // beside a bad one
      verse("Job.40.5", own_features(5), own_features(9)), verse("Job.40.6", own_features(6), own_features(6))};
  EXPECT_EQ(verdicts(verses),
            (std::vector<Misalignment>{ok, ok, ok, Misalignment::beside_misaligned, Misalignment::low_similarity, ok}));
  EXPECT_FALSE(judge_alignment(verses, kThresholds)[3].judged_by_features);
}

TEST(VerseAlignment, FlagsLengthsFarFromTheUsualRatio) {
  // The other language runs 10% longer as a rule; a verse 3 times longer took in something else.
  std::vector<AlignedVerse> verses;
  for (int n = 1; n <= 5; ++n) {
    verses.push_back(verse("Rom.14." + std::to_string(n), own_features(n), own_features(n), 100, n == 4 ? 330 : 110));
  }
  verses.push_back(verse("Rom.14.6", features({"H1"}), features({"H1"}), 100, 20));  // too few features, too short
  const auto judged = judge_alignment(verses, kThresholds);
  EXPECT_EQ(verdicts(verses),
            (std::vector<Misalignment>{ok, ok, ok, Misalignment::length_mismatch, ok, Misalignment::length_mismatch}));
  EXPECT_NEAR(judged[3].relative_length_ratio, 3.0, 1e-12);
}

TEST(VerseAlignment, NeighboursAreOnlyInTheSameBook) {
  // The first verse of Exodus looks like the last of Genesis in the other module; that is no shift.
  const auto half = [](int n, int m) {
    VerseFeatures f = own_features(n);
    VerseFeatures g = own_features(m);
    return strong_number_features({f[0], f[1], f[2], f[3], g[0], g[1]});
  };
  std::vector<AlignedVerse> verses{verse("Gen.50.26", own_features(1), half(1, 2)),
                                   verse("Exod.1.1", own_features(2), own_features(1))};
  const auto judged = judge_alignment(verses, kThresholds);
  EXPECT_DOUBLE_EQ(judged[0].neighbour_similarity, 0.0);
  EXPECT_EQ(judged[0].verdict, ok);
  EXPECT_EQ(judged[1].verdict, Misalignment::low_similarity);
}

}  // namespace
}  // namespace attn::data
