#pragma once
// A gold word alignment of one verse pair from Strong's numbers: KJV and RV1909 tag their words
// with the number of the Hebrew or Greek word they translate (osis_text.h, word_strong_numbers), so
// an English word and a Spanish word of the same verse that carry the same number translate the
// same original word. This is independent of any model, and serves to score alignments taken from
// attention (alignment error rate, Och & Ney 2003).
//
// Links, in Och & Ney's terms:
//  - possible: every pair (source word i, target word j) that shares a number;
//  - sure: a pair sharing a number that is carried by exactly one word on each side of the verse,
//    an unambiguous one-to-one link. A number spread over several words on either side ("EN el
//    principio" for H7225, or "should" and "perish" for G622) gives possible links only, since the
//    tags do not say which of the words is the translation and which are helpers.
//  Every sure link is also possible.
//
// Tagged words: the words carrying at least one number that the other side also has. Only these can
// be judged by the gold: an untagged word may have a true partner that the tags do not show.
//
// Untranslated particles: a few numbers name no word that is translated, and are left out of the
// gold altogether as if the word did not carry them (see is_untranslated_particle).
//
// Files (write_gold_line, write_tagged_line): Pharaoh format, "i-j" for sure links and "i?j" for
// possible-only ones, 0-based word indices, source first, sorted by (i, j), separated by one space;
// tagged words as "0 1 2 5 ||| 0 1 3". A verse with nothing gives an empty line, and " ||| ".
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

struct WordLink {
  std::size_t source = 0;  // word index in the source verse (KJV)
  std::size_t target = 0;  // word index in the target verse (RV1909)
  bool sure = false;       // else possible only

  bool operator==(const WordLink&) const = default;
};

struct StrongsAlignment {
  std::vector<WordLink> links;             // sorted by (source, target), each pair once
  std::vector<std::size_t> tagged_source;  // ascending
  std::vector<std::size_t> tagged_target;  // ascending

  std::size_t sure_count() const;
};

// Whether the number is one the gold ignores: H853, the Hebrew object marker 'et', which has no
// translation of its own. Measured on the installed modules: KJV hangs it on 4 words of the whole
// Bible ("and" in Gen 1:1, where the Hebrew is "ve-et"; "also", "And", "upon"), RV1909 on 462 words
// in 301 verses, mostly words that translate the look-alike preposition 'et' = "with" (H854) or a
// pronoun suffix: "con" 108 times, "tu" 39, "tus" 30, "ti" 21. The two sides share it in one verse
// only (Zech 6:8, KJV "upon" and RV1909 "Luego me"), a link that is wrong for "upon" and "Luego".
// Keeping it would add nothing true and mark hundreds of Spanish words as tagged that have no
// Strong's partner in the English, so it is dropped.
bool is_untranslated_particle(std::string_view strong_number);

// The gold alignment of a verse pair, from the Strong's numbers of each word of each side.
StrongsAlignment align_by_strong_numbers(const std::vector<std::vector<std::string>>& source_words,
                                         const std::vector<std::vector<std::string>>& target_words);

// "3-4 2?0 ..." sorted: see the file formats above. No line end.
std::string gold_line(const StrongsAlignment& alignment);
// "2 3 4 ||| 0 1 2". No line end.
std::string tagged_line(const StrongsAlignment& alignment);

}  // namespace attn::data
