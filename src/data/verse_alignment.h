#pragma once
// Finding verses that carry the same OSIS id in two modules but not the same text: RV1909 numbers
// the verses of about a dozen chapters its own way (its Jonah 2:1 is KJV Jonah 1:17), WEB moves a
// few (Rom 16:25-27 sit in its Rom 14:23).
//
// Each verse of a module is compared with the same verse of the pivot module through a set of
// features: the Strong's numbers of its words when the modules are in different languages (KJV and
// RV1909 tag their words with the numbers of the Hebrew and Greek words they translate), the words
// themselves when both are in the same language. (WEB's Strong's tags cannot be used: where Hebrew
// and English verse numbers differ, WEB hangs the tags of one verse on its neighbour, e.g. WEB
// Gen 32:2 carries the tags of Gen 32:1.) The measure is the Dice coefficient of the two sets,
// 2|A∩B| / (|A|+|B|). A verse is misaligned, in this order of checks, when
//  - both sides have enough features to judge and the similarity is below a threshold, or
//  - a neighbouring verse fits better: the pivot verse is more similar to the other module's
//    previous or next verse, or the other module's verse to the pivot's previous or next verse,
//    by more than a margin (catches verses shifted by one within lists of look-alike verses), or
//  - too few features to judge, and the verse before or after it was found misaligned above, or
//  - the ratio of the two texts' lengths, relative to its median over the whole text, is beyond
//    a bound (catches verses that took in half of their neighbour, and judges the verses with too
//    few features to compare).
// Neighbours are the adjacent verses in the pivot's order within the same book.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// Sorted, without repeats.
using VerseFeatures = std::vector<std::string>;

enum class VerseFeatureKind { strong_numbers, words };

VerseFeatures strong_number_features(const std::vector<std::string>& strong_numbers);

// The words of the text, ASCII letters lowercased; punctuation (ASCII, Latin-1 and U+2000-U+206F:
// quotes, dashes) separates words.
VerseFeatures word_features(std::string_view text);

// 2|A∩B| / (|A|+|B|); 0 when both are empty.
double dice_similarity(const VerseFeatures& a, const VerseFeatures& b);

// A verse as the pivot module and the other module have it.
struct AlignedVerse {
  std::string osis_id;
  VerseFeatures pivot_features;
  VerseFeatures other_features;
  std::size_t pivot_length = 0;  // characters of the plain text
  std::size_t other_length = 0;
};

enum class Misalignment { none, low_similarity, fits_neighbour, beside_misaligned, length_mismatch };

// What the reports call each kind of misalignment.
std::string_view misalignment_name(Misalignment kind);

struct AlignmentThresholds {
  double min_similarity;     // Dice below this: misaligned
  double neighbour_margin;   // a neighbour's Dice above the verse's own by more than this: misaligned
  std::size_t min_features;  // fewer distinct features on either side: too few to judge by Dice
  double max_length_ratio;   // length ratio beyond this factor of the median, either way: misaligned
};

// The thresholds chosen for each kind of feature from the distributions in the installed modules
// (see the report of `attn corpus bible --scores`).
AlignmentThresholds alignment_thresholds(VerseFeatureKind kind);

struct VerseJudgement {
  Misalignment verdict = Misalignment::none;
  std::size_t pivot_features = 0;  // distinct features on each side
  std::size_t other_features = 0;
  bool judged_by_features = false;   // enough features on both sides
  double similarity = 0;             // Dice of the verse with itself
  double neighbour_similarity = 0;   // best Dice with a neighbouring verse
  double relative_length_ratio = 1;  // (other length / pivot length) / median of that ratio
};

// One judgement per verse, in the same order.
std::vector<VerseJudgement> judge_alignment(const std::vector<AlignedVerse>& verses,
                                            const AlignmentThresholds& thresholds);

}  // namespace attn::data
