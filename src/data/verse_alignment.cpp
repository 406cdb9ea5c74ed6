#include "data/verse_alignment.h"

#include <algorithm>
#include <cmath>

namespace attn::data {
namespace {

VerseFeatures sorted_unique(VerseFeatures features) {
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
  return features;
}

std::string_view book_of(std::string_view osis_id) { return osis_id.substr(0, osis_id.find('.')); }

// Whether the UTF-8 character starting with these bytes separates words.
bool is_word_separator(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
  const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
  if (c == 0xC2) return true;                          // U+0080-U+00BF: Latin-1 punctuation
  if (c == 0xC3) return next == 0x97 || next == 0xB7;  // × ÷
  if (c == 0xE2) return next == 0x80 || next == 0x81;  // U+2000-U+207F: quotes, dashes, …
  return false;
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

double median(std::vector<double> values) {
  if (values.empty()) return 1;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

double length_ratio(const AlignedVerse& verse) {
  return static_cast<double>(std::max<std::size_t>(verse.other_length, 1)) /
         static_cast<double>(std::max<std::size_t>(verse.pivot_length, 1));
}

}  // namespace

VerseFeatures strong_number_features(const std::vector<std::string>& strong_numbers) {
  return sorted_unique(strong_numbers);
}

VerseFeatures word_features(std::string_view text) {
  VerseFeatures words;
  std::string word;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation_byte(text[i])) {
      if (!word.empty()) word += text[i];
    } else if (is_word_separator(text, i)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
      while (i + 1 < text.size() && is_continuation_byte(text[i + 1])) ++i;  // the separator's other bytes
    } else {
      const char c = text[i];
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return sorted_unique(std::move(words));
}

double dice_similarity(const VerseFeatures& a, const VerseFeatures& b) {
  if (a.empty() && b.empty()) return 0;
  std::size_t common = 0;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i < *j) {
      ++i;
    } else if (*j < *i) {
      ++j;
    } else {
      ++common, ++i, ++j;
    }
  }
  return 2.0 * static_cast<double>(common) / static_cast<double>(a.size() + b.size());
}

std::string_view misalignment_name(Misalignment kind) {
  switch (kind) {
    case Misalignment::none:
      return "aligned";
    case Misalignment::low_similarity:
      return "mismatch";
    case Misalignment::fits_neighbour:
      return "fits a neighbouring verse";
    case Misalignment::beside_misaligned:
      return "too few to judge, beside misaligned verses";
    case Misalignment::length_mismatch:
      return "length mismatch";
  }
  return "aligned";
}

AlignmentThresholds alignment_thresholds(VerseFeatureKind kind) {
  switch (kind) {
    // KJV/RV1909, verses with 5+ Strong's numbers each: in the renumbered chapters (Num 13, 30,
    // 1 Sam 24, 1 Chr 21, 2 Chr 33, Job 39-40, Hos 12, Jonah 2, ...) 145 of 222 verses have Dice
    // below 0.3; everywhere else 7 of 30,600 do, and 99% are above 0.5. A shift by one verse
    // within look-alike lists (Num 13: "of the tribe of X, Y the son of Z") keeps Dice near 0.4,
    // but the neighbour then fits far better (0.8-1.0). Below 5 numbers one tag chosen
    // differently moves Dice by 0.2 or more, too coarse to judge by.
    case VerseFeatureKind::strong_numbers:
      return {.min_similarity = 0.3, .neighbour_margin = 0.1, .min_features = 5, .max_length_ratio = 2.0};
    // KJV/WEB share their verse division but not their wording ("begat" / "became the father of"):
    // word Dice of aligned verses spreads from 0 to 1 with no gap, so only a verse sharing almost
    // nothing is judged by Dice alone; moved verses are caught by their neighbour (Matt 23:13-14,
    // swapped in WEB: own 0.3, neighbour 0.76) or their length (Rom 14:23 holds WEB's 14:23-26).
    case VerseFeatureKind::words:
      return {.min_similarity = 0.1, .neighbour_margin = 0.2, .min_features = 5, .max_length_ratio = 2.0};
  }
  return {};
}

std::vector<VerseJudgement> judge_alignment(const std::vector<AlignedVerse>& verses,
                                            const AlignmentThresholds& thresholds) {
  const std::size_t n = verses.size();
  std::vector<VerseJudgement> judgements(n);
  std::vector<double> ratios;
  ratios.reserve(n);
  for (const auto& verse : verses) ratios.push_back(length_ratio(verse));
  const double median_ratio = median(ratios);

  const auto same_book = [&](std::size_t i, std::size_t j) {
    return book_of(verses[i].osis_id) == book_of(verses[j].osis_id);
  };
  // Pass 1: verses with enough features on both sides, by their own and their neighbours' Dice.
  for (std::size_t i = 0; i < n; ++i) {
    const AlignedVerse& verse = verses[i];
    VerseJudgement& judgement = judgements[i];
    judgement.relative_length_ratio = ratios[i] / median_ratio;
    judgement.similarity = dice_similarity(verse.pivot_features, verse.other_features);
    for (std::size_t j : {i - 1, i + 1}) {  // i - 1 wraps around to a huge index for i == 0
      if (j >= n || !same_book(i, j)) continue;
      judgement.neighbour_similarity =
          std::max({judgement.neighbour_similarity, dice_similarity(verse.pivot_features, verses[j].other_features),
                    dice_similarity(verses[j].pivot_features, verse.other_features)});
    }
    judgement.pivot_features = verse.pivot_features.size();
    judgement.other_features = verse.other_features.size();
    judgement.judged_by_features =
        std::min(judgement.pivot_features, judgement.other_features) >= thresholds.min_features;
    if (!judgement.judged_by_features) continue;
    if (judgement.similarity < thresholds.min_similarity) {
      judgement.verdict = Misalignment::low_similarity;
    } else if (judgement.neighbour_similarity > judgement.similarity + thresholds.neighbour_margin) {
      judgement.verdict = Misalignment::fits_neighbour;
    }
  }
  // Pass 2: verses too poor in features follow their neighbours; the length ratio checks everyone.
  const auto misaligned_by_features = [&](std::size_t j) {
    return j < n && judgements[j].judged_by_features && judgements[j].verdict != Misalignment::none;
  };
  for (std::size_t i = 0; i < n; ++i) {
    VerseJudgement& judgement = judgements[i];
    if (judgement.verdict != Misalignment::none) continue;
    if (!judgement.judged_by_features && ((misaligned_by_features(i - 1) && same_book(i, i - 1)) ||
                                          (misaligned_by_features(i + 1) && same_book(i, i + 1)))) {
      judgement.verdict = Misalignment::beside_misaligned;
    } else if (std::abs(std::log(judgement.relative_length_ratio)) > std::log(thresholds.max_length_ratio)) {
      judgement.verdict = Misalignment::length_mismatch;
    }
  }
  return judgements;
}

}  // namespace attn::data
