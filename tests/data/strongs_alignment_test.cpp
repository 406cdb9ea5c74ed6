// The Strong's gold alignment: on hand-made numbers, and on three real verses of the installed KJV
// and RV1909 modules whose links were worked out by hand from their raw OSIS (`mod2imp MODULE`).
// The real verses need the modules (scripts/setup installs sword-text-kjv and sword-text-sparv): a
// missing module throws, and the test fails.
#include "data/strongs_alignment.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "data/osis_text.h"
#include "data/sword_module.h"

namespace attn::data {
namespace {

using Numbers = std::vector<std::vector<std::string>>;

TEST(StrongsAlignment, SureOnlyForNumbersOnOneWordEachSide) {
  // source: a(H1) b(H2) c() d(H2 H3) e(H4)      target: v(H1) w(H2) x(H3) y(H3) z(H5)
  const StrongsAlignment gold = align_by_strong_numbers(Numbers{{"H1"}, {"H2"}, {}, {"H2", "H3"}, {"H4"}},
                                                        Numbers{{"H1"}, {"H2"}, {"H3"}, {"H3"}, {"H5"}});
  // H1: a-v, one word each side: sure. H2: b and d against w: possible. H3: d against x and y:
  // possible. H4 and H5 have no partner.
  EXPECT_EQ(gold.links,
            (std::vector<WordLink>{{0, 0, true}, {1, 1, false}, {3, 1, false}, {3, 2, false}, {3, 3, false}}));
  EXPECT_EQ(gold.sure_count(), 1u);
  EXPECT_EQ(gold.tagged_source, (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(gold.tagged_target, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(gold_line(gold), "0-0 1?1 3?1 3?2 3?3");
  EXPECT_EQ(tagged_line(gold), "0 1 3 ||| 0 1 2 3");
}

TEST(StrongsAlignment, PairSharingSeveralNumbersIsSureIfAnyIsOneToOne) {
  // a(G1 G2) b(G2) against x(G1 G2): G1 is one-to-one, so a-x is sure although G2 is not.
  const StrongsAlignment gold = align_by_strong_numbers(Numbers{{"G1", "G2"}, {"G2"}}, Numbers{{"G1", "G2"}});
  EXPECT_EQ(gold.links, (std::vector<WordLink>{{0, 0, true}, {1, 0, false}}));
  // A number twice on one word counts as one word.
  EXPECT_EQ(gold_line(align_by_strong_numbers(Numbers{{"G7", "G7"}}, Numbers{{}, {"G7"}})), "0-1");
}

TEST(StrongsAlignment, IgnoresTheObjectMarkerAndEmptyVerses) {
  EXPECT_TRUE(is_untranslated_particle("H853"));
  EXPECT_FALSE(is_untranslated_particle("H854"));
  EXPECT_FALSE(is_untranslated_particle("G853"));
  // Zech 6:8's only shared H853 ("upon" / "Luego me") makes no link and tags nothing.
  const StrongsAlignment gold =
      align_by_strong_numbers(Numbers{{"H2199"}, {}, {"H853"}}, Numbers{{"H853"}, {"H853"}, {"H2199"}});
  EXPECT_EQ(gold_line(gold), "0-2");
  EXPECT_EQ(tagged_line(gold), "0 ||| 2");
  const StrongsAlignment none = align_by_strong_numbers(Numbers{{"H1"}}, Numbers{{"H2"}, {}});
  EXPECT_EQ(gold_line(none), "");
  EXPECT_EQ(tagged_line(none), " ||| ");
  EXPECT_EQ(gold_line(align_by_strong_numbers({}, {})), "");
}

struct RealVerse {
  std::string kjv_text, es_text;
  StrongsAlignment gold;
};

RealVerse real_verse(const std::string& osis_id) {
  static const SwordLibrary library;
  const OsisVerse kjv = parse_osis_verse(library.read_verse_markup("engKJV2006eb", osis_id));
  const OsisVerse es = parse_osis_verse(library.read_verse_markup("spaRV1909eb", osis_id));
  return {kjv.text, es.text, align_by_strong_numbers(kjv.word_strong_numbers, es.word_strong_numbers)};
}

TEST(StrongsAlignment, Genesis1v1ByHand) {
  const RealVerse verse = real_verse("Gen.1.1");
  // KJV: In the beginning(H7225) God(H430) created(H1254) the heaven(H8064) and(H853) the earth.(H776)
  //      0  1   2                3          4              5   6              7         8   9
  // RV:  EN el principio(H7225, one tag on all three) crió(H1254) Dios(H430) los cielos(H8064)
  //      0  1  2                                       3           4          5   6
  //      y la tierra.(H776, one tag on all three)
  //      7 8  9
  // H430 and H1254 are on one word each side: 3-4, 4-3 sure. H7225, H8064 and H776 are on several
  // Spanish words: possible. "and" carries only H853 (ignored; RV1909 has none here): untagged.
  ASSERT_EQ(verse.kjv_text, "In the beginning God created the heaven and the earth.");
  ASSERT_EQ(verse.es_text, "EN el principio crió Dios los cielos y la tierra.");
  EXPECT_EQ(gold_line(verse.gold), "2?0 2?1 2?2 3-4 4-3 6?5 6?6 9?7 9?8 9?9");
  EXPECT_EQ(tagged_line(verse.gold), "2 3 4 6 9 ||| 0 1 2 3 4 5 6 7 8 9");
}

TEST(StrongsAlignment, FirstJohn4v8ByHand) {
  const RealVerse verse = real_verse("1John.4.8");
  // KJV: He that loveth(G25) not(G3361) knoweth(G1097) not(G3756) God;(G2316) for(G3754)
  //      0  1    2           3           4              5           6           7
  //      God(G2316) is(G2076) love.(G26)
  //      8          9         10
  // RV:  El(G3588) que no(G3361, one tag) ama,(G25) no(G3756) conoce(G1097) á Dios;(G2316, one tag)
  //      0         1   2                  3         4         5             6 7
  //      porque(G3754) Dios(G2316) es(G2076) amor.(G26)
  //      8             9           10        11
  // The two negations are told apart by their numbers: mē "loveth not" = "que no" (possible, two
  // Spanish words), ou "knoweth not" = "no conoce" (5-4 sure). God is twice in KJV and on three
  // Spanish words: 2 x 3 possible links. The article G3588 ("El") is untagged in KJV.
  ASSERT_EQ(verse.kjv_text, "He that loveth not knoweth not God; for God is love.");
  ASSERT_EQ(verse.es_text, "El que no ama, no conoce á Dios; porque Dios es amor.");
  EXPECT_EQ(gold_line(verse.gold), "2-3 3?1 3?2 4-5 5-4 6?6 6?7 6?9 7-8 8?6 8?7 8?9 9-10 10-11");
  EXPECT_EQ(tagged_line(verse.gold), "2 3 4 5 6 7 8 9 10 ||| 1 2 3 4 5 6 7 8 9 10 11");
  EXPECT_EQ(verse.gold.sure_count(), 6u);  // 2-3 4-5 5-4 7-8 9-10 10-11
}

TEST(StrongsAlignment, John3v16ByHand) {
  const RealVerse verse = real_verse("John.3.16");
  // KJV words and numbers (every word is tagged):
  //  0 For G1063, 1 God G2316, 2 so G3779, 3 loved G25, 4 the + 5 world, G2889 (one tag), 6 that G5620,
  //  7 he + 8 gave G1325, 9 his G846, 10 only + 11 begotten G3439, 12 Son, G5207, 13 that G2443,
  //  14 whosoever G3956, 15 believeth G4100, 16 in G1519, 17 him G846, 18 should G622, 19 not G3361,
  //  20 perish, G622, 21 but G235, 22 have G2192, 23 everlasting G166, 24 life. G2222
  // RV1909:
  //  0 Porque G1063, 1 de + 2 tal + 3 manera G3779, 4 amó G25, 5 Dios G2316, 6 al G3588, 7 mundo, G2889,
  //  8 que G5620, 9 ha + 10 dado G1325, 11 á + 12 su G846, 13 Hijo G5207, 14 unigénito, G3439,
  //  15 para + 16 que G2443, 17 todo G3956, 18 aquel G3588, 19 que G2443, 20 en G1519, 21 él G846,
  //  22 cree, G4100, 23 no G3361, 24 se + 25 pierda, G622, 26 mas G235, 27 tenga G2192, 28 vida G2222,
  //  29 eterna. G166
  // Sure (one word each side): G1063 0-0, G2316 1-5, G25 3-4, G5620 6-8, G5207 12-13, G3956 14-17,
  // G4100 15-22, G1519 16-20, G3361 19-23, G235 21-26, G2192 22-27, G166 23-29, G2222 24-28.
  // Possible: G3779 2 x {1,2,3}; G2889 {4,5} x 7; G1325 {7,8} x {9,10}; G846 {9,17} x {11,12,21};
  // G3439 {10,11} x 14; G2443 13 x {15,16,19}; G622 {18,20} x {24,25}. G3588 is Spanish only, so
  // "al" (6) and "aquel" (18) are the only untagged words.
  ASSERT_EQ(verse.kjv_text,
            "For God so loved the world, that he gave his only begotten Son, that whosoever believeth in him should "
            "not perish, but have everlasting life.");
  ASSERT_EQ(verse.es_text,
            "Porque de tal manera amó Dios al mundo, que ha dado á su Hijo unigénito, para que todo aquel que en él "
            "cree, no se pierda, mas tenga vida eterna.");
  EXPECT_EQ(gold_line(verse.gold),
            "0-0 1-5 2?1 2?2 2?3 3-4 4?7 5?7 6-8 7?9 7?10 8?9 8?10 9?11 9?12 9?21 10?14 11?14 12-13 13?15 13?16 "
            "13?19 14-17 15-22 16-20 17?11 17?12 17?21 18?24 18?25 19-23 20?24 20?25 21-26 22-27 23-29 24-28");
  EXPECT_EQ(verse.gold.sure_count(), 13u);
  EXPECT_EQ(verse.gold.links.size(), 37u);
  EXPECT_EQ(tagged_line(verse.gold),
            "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 ||| "
            "0 1 2 3 4 5 7 8 9 10 11 12 13 14 15 16 17 19 20 21 22 23 24 25 26 27 28 29");
}

// Every verse of the three modules: one per-word entry per word of the cleaned text, and no word
// carrying a number that the verse's tags do not have.
TEST(StrongsAlignment, EveryVerseOfEveryModuleHasOneEntryPerWord) {
  const SwordLibrary library;
  for (const char* module : {"engKJV2006eb", "engWEB2015eb", "spaRV1909eb"}) {
    const SwordBible bible = library.read_bible(module);
    std::size_t tagged_words = 0;
    for (const SwordVerse& sword_verse : bible.verses) {
      const OsisVerse verse = parse_osis_verse(sword_verse.markup);
      const std::size_t words =
          verse.text.empty() ? 0 : static_cast<std::size_t>(std::count(verse.text.begin(), verse.text.end(), ' ')) + 1;
      ASSERT_EQ(verse.word_strong_numbers.size(), words) << module << " " << sword_verse.osis_id << ": " << verse.text;
      for (const auto& numbers : verse.word_strong_numbers) {
        tagged_words += numbers.empty() ? 0 : 1;
        for (const auto& number : numbers) {
          EXPECT_NE(std::find(verse.strong_numbers.begin(), verse.strong_numbers.end(), number),
                    verse.strong_numbers.end())
              << module << " " << sword_verse.osis_id << " " << number;
        }
      }
    }
    // mod2imp counts 349k Strong's <w> tags in KJV, 395k in RV1909 and 698k in WEB, nearly all on words.
    EXPECT_GT(tagged_words, 300000u) << module;
  }
}

}  // namespace
}  // namespace attn::data
