// The OSIS markup stripper on hand-written snippets; the expected texts are written by hand.
#include "data/osis_text.h"

#include <gtest/gtest.h>

namespace attn::data {
namespace {

TEST(OsisText, KeepsWordsOfInlineElements) {
  EXPECT_EQ(osis_to_plain_text(R"(In the <w lemma="strong:H7225">beginning</w> <w lemma="strong:H0430">God</w>.)"),
            "In the beginning God.");
  EXPECT_EQ(osis_to_plain_text(R"(darkness <transChange type="added">was</transChange> upon)"), "darkness was upon");
  EXPECT_EQ(osis_to_plain_text(R"(the <divineName><w lemma="strong:H3068">LORD</w></divineName> said)"),
            "the LORD said");
  EXPECT_EQ(osis_to_plain_text(R"(said, <q marker="" who="Jesus">Verily <seg type="x-nested">I</seg> say</q>)"),
            "said, Verily I say");
}

TEST(OsisText, DropsNotesWithEverythingInside) {
  EXPECT_EQ(
      osis_to_plain_text(R"(earth.<note placement="foot"><reference type="annotateRef">1.4 </reference>)"
                         R"(the light: <w lemma="strong:H1">Heb.</w> <rdg type="alternate">between</rdg></note>)"),
      "earth.");
  // A note nested in a note, and markup after the outer one.
  EXPECT_EQ(osis_to_plain_text("a <note>x <note>y</note> z</note> b"), "a b");
  EXPECT_EQ(osis_to_plain_text("<note>only a note</note>"), "");
}

TEST(OsisText, DroppedElementSeparatesWordsButNotPunctuation) {
  // WEB Gen 1:1 puts its footnote where a space belongs.
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:H0430">God</w><note placement="foot">The Hebrew word</note>)"
                               R"(<w lemma="strong:H1254">created</w>)"),
            "God created");
  EXPECT_EQ(osis_to_plain_text("word<note>n</note>."), "word.");
  EXPECT_EQ(osis_to_plain_text("word<note>n</note>, next"), "word, next");
  EXPECT_EQ(osis_to_plain_text("said,<note>n</note>and"), "said, and");
  EXPECT_EQ(osis_to_plain_text("“<note>n</note>Let"), "“Let");
  EXPECT_EQ(osis_to_plain_text("light.<note>n</note>”"), "light.”");
  EXPECT_EQ(osis_to_plain_text("(word<note>n</note>)"), "(word)");
  // The whitespace around a note belongs to it (WEB Luke 12:6).
  EXPECT_EQ(osis_to_plain_text("coins</q> <note>An assarion</note> <q>? Not"), "coins? Not");
}

TEST(OsisText, SelfClosingAndMilestoneTagsSeparateWords) {
  EXPECT_EQ(osis_to_plain_text(R"(first line<lb/>second line)"), "first line second line");
  EXPECT_EQ(osis_to_plain_text(R"(increased!<l eID="a" level="1"/><l level="2" sID="b"/>Many)"), "increased! Many");
  EXPECT_EQ(osis_to_plain_text(R"(<div type="x-milestone" subType="x-preverse" sID="pv1"/>And God)"), "And God");
  EXPECT_EQ(osis_to_plain_text(R"(waters.  <div eID="gen3" type="x-p"/>)"), "waters.");
  EXPECT_EQ(osis_to_plain_text(R"(end<milestone type="x-usfm-toc1" n="Genesis"/>.)"), "end.");
  EXPECT_EQ(osis_to_plain_text(R"(<chapter n="1" osisID="Gen.1" sID="Gen.1"/>In the beginning)"), "In the beginning");
}

TEST(OsisText, InlineTagsDoNotSplitWords) {
  // KJV tags parts of words.
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:G1144">with tear</w>s, and)"), "with tears, and");
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:G2596">in</w>asmuch)"), "inasmuch");
}

TEST(OsisText, AdjacentInlineElementsAreSeparateWordsExceptEncliticPronouns) {
  // RV1909 Gen 2:12 lost the spaces around "también".
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:H8033">hay allí</w><transChange type="added">también</transChange>)"
                               R"(<w lemma="strong:H0916">bdelio</w>)"),
            "hay allí también bdelio");
  // RV1909 Gen 19:12 and 1 Kgs 3:5: pronouns joined to the verb.
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:H3318">sáca</w><transChange type="added">lo</transChange> de)"),
            "sácalo de");
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:H0559">y díjo</w><transChange type="added">le</transChange>)"
                               R"(<w lemma="strong:H0430">Dios</w>)"),
            "y díjole Dios");
  // RV1909 1 Sam 14:1: after "no" the pronoun stands alone.
  EXPECT_EQ(osis_to_plain_text(R"(<w lemma="strong:H3808">Y no</w><transChange type="added">lo</transChange>)"
                               R"(<w lemma="strong:H5046">hizo saber</w>)"),
            "Y no lo hizo saber");
}

TEST(OsisText, DropsHeadingsButKeepsCanonicalTitles) {
  EXPECT_EQ(osis_to_plain_text(R"(<title type="main">The First Book of Moses</title> In the beginning)"),
            "In the beginning");
  EXPECT_EQ(osis_to_plain_text(R"(<title canonical="true" type="psalm">A <w lemma="strong:H4210">Psalm</w> of David.)"
                               R"(</title> <l level="1" sID="x"/>LORD, how)"),
            "A Psalm of David. LORD, how");
  EXPECT_EQ(osis_to_plain_text("lovers.<speaker>Friends</speaker> We will"), "lovers. We will");
}

TEST(OsisText, DropsNonScriptureDivisions) {
  // WEB hangs its glossary on Rev 22:21 as a milestone division.
  EXPECT_EQ(osis_to_plain_text(
                R"(saints. Amen. <chapter eID="Rev.22"/> <div sID="g1" type="glossary"/> )"
                R"(<title>Glossary</title> Abaddon is Hebrew for destruction. <div eID="g1" type="glossary"/>)"),
            "saints. Amen.");
  EXPECT_EQ(osis_to_plain_text(R"(<div type="introduction">About this book.</div>Verse text)"), "Verse text");
}

TEST(OsisText, UnescapesEntities) {
  EXPECT_EQ(osis_to_plain_text("A &amp; B &lt;c&gt; &quot;d&quot; &apos;e&apos;"), "A & B <c> \"d\" 'e'");
  EXPECT_EQ(osis_to_plain_text("Mois&#233;s Mois&#xE9;s Mois&#XE9;s"), "Moisés Moisés Moisés");
  // Not entities: kept as they are.
  EXPECT_EQ(osis_to_plain_text("AT&T &unknown; &#0; a&b;"), "AT&T &unknown; &#0; a&b;");
}

TEST(OsisText, NormalisesWhitespace) {
  EXPECT_EQ(osis_to_plain_text("  In\tthe \n\r beginning  "), "In the beginning");
  EXPECT_EQ(osis_to_plain_text("a <w>b</w>  <w>c</w> "), "a b c");
  EXPECT_EQ(osis_to_plain_text(""), "");
  EXPECT_EQ(osis_to_plain_text("   "), "");
}

TEST(OsisText, DropsPilcrowAndUsfmMarkers) {
  EXPECT_EQ(osis_to_plain_text("¶ And God said"), "And God said");
  EXPECT_EQ(osis_to_plain_text("waters. ¶ And"), "waters. And");
  // KJV Exod 6:3 and Exod 17:16 keep USFM character markers from their source.
  EXPECT_EQ(osis_to_plain_text(R"(my name \nd <w lemma="strong:H3068">JEHOVAH</w></divineName> was)"),
            "my name JEHOVAH was");
  EXPECT_EQ(osis_to_plain_text(R"(against the \nd LORD\+nd*, therefore)"), "against the LORD, therefore");
  EXPECT_EQ(osis_to_plain_text(R"(a \ b)"), R"(a \ b)");
}

TEST(OsisText, KeepsMalformedMarkupAsText) {
  EXPECT_EQ(osis_to_plain_text("1 < 2"), "1 < 2");
  EXPECT_EQ(osis_to_plain_text("a <w"), "a <w");
}

TEST(OsisText, CollectsStrongNumbersOfKeptWords) {
  const OsisVerse verse = parse_osis_verse(
      R"(<w lemma="strong:H7225">EN el principio</w> <w lemma="strong:G0001 G2532">x</w> )"
      R"(<w lemma="strong:G3588 strong:G25">y</w><note><w lemma="strong:H9999">in a note</w></note> )"
      R"(<w lemma="lemma.TR:αγαπη strong:G26">z</w> <w>untagged</w> <w lemma="strong:H0000">zero</w>)");
  EXPECT_EQ(verse.strong_numbers, (std::vector<std::string>{"H7225", "G1", "G2532", "G3588", "G25", "G26", "H0"}));
  EXPECT_EQ(verse.text, "EN el principio x y z untagged zero");
}

using Numbers = std::vector<std::vector<std::string>>;

TEST(OsisText, WordNumbersOfSpanningAndSplitWords) {
  // One <w> over three words gives each its number; untagged words get none.
  const OsisVerse genesis =
      parse_osis_verse(R"(<w lemma="strong:H7225">EN el principio</w> <w lemma="strong:H1254">crió</w> x.)");
  EXPECT_EQ(genesis.text, "EN el principio crió x.");
  EXPECT_EQ(genesis.word_strong_numbers, (Numbers{{"H7225"}, {"H7225"}, {"H7225"}, {"H1254"}, {}}));
  // KJV tags part of a word: the whole word carries the number, and so does the word before.
  const OsisVerse tears =
      parse_osis_verse(R"(<w lemma="strong:G1144">with tear</w>s, and <w lemma="strong:G2596">in</w>asmuch)");
  EXPECT_EQ(tears.text, "with tears, and inasmuch");
  EXPECT_EQ(tears.word_strong_numbers, (Numbers{{"G1144"}, {"G1144"}, {}, {"G2596"}}));
  // Punctuation right after a tag belongs to the word; the space before a tag belongs to none.
  const OsisVerse punctuation = parse_osis_verse(R"(the <w lemma="strong:H776">earth</w>. And)");
  EXPECT_EQ(punctuation.word_strong_numbers, (Numbers{{}, {"H776"}, {}}));
}

TEST(OsisText, WordNumbersSkipDroppedText) {
  // A note between two tagged words, holding tagged words of its own: the note leaves one space and
  // no words, so "created" is word 2 and the note's H9999 is nobody's.
  const OsisVerse verse =
      parse_osis_verse(R"(<title>Heading <w lemma="strong:H1">words</w></title>In <w lemma="strong:H430">God</w>)"
                       R"(<note placement="foot">The <w lemma="strong:H9999">Hebrew</w> word</note>)"
                       R"(<w lemma="strong:H1254">created</w> <w lemma="strong:H2">¶</w> it.)");
  EXPECT_EQ(verse.text, "In God created it.");
  EXPECT_EQ(verse.word_strong_numbers, (Numbers{{}, {"H430"}, {"H1254"}, {}}));
  // The enclitic pronoun joins the verb: one word, the verb's number.
  const OsisVerse enclitic =
      parse_osis_verse(R"(<w lemma="strong:H3318">sáca</w><transChange type="added">lo</transChange> de)");
  EXPECT_EQ(enclitic.text, "sácalo de");
  EXPECT_EQ(enclitic.word_strong_numbers, (Numbers{{"H3318"}, {}}));
}

TEST(OsisText, WordNumbersSeveralOnOneWord) {
  // Several numbers in one lemma, two tags on one word, a tag inside a tag, the same number twice on
  // one word, a lemma without Strong's, an empty tag, a tag never closed. (Two tags with nothing
  // between them are two words, see above, so the word "abc" has untagged text between its tags.)
  const OsisVerse verse = parse_osis_verse(
      R"(<w lemma="strong:G3588 strong:G0025">a</w>b<w lemma="strong:G26">c</w> )"
      R"(<w lemma="strong:H5">d <w lemma="strong:H6">e</w></w> <w lemma="strong:H7">f</w>g<w lemma="strong:H7">h</w> )"
      R"(<w lemma="lemma.TR:x">i</w> <w lemma="strong:H8"></w>j <w lemma="strong:H9">k)");
  EXPECT_EQ(verse.text, "abc d e fgh i j k");
  EXPECT_EQ(verse.word_strong_numbers,
            (Numbers{{"G3588", "G25", "G26"}, {"H5"}, {"H5", "H6"}, {"H7"}, {}, {}, {"H9"}}));
  EXPECT_EQ(verse.strong_numbers,
            (std::vector<std::string>{"G3588", "G25", "G26", "H5", "H6", "H7", "H7", "H8", "H9"}));
  EXPECT_TRUE(parse_osis_verse("").word_strong_numbers.empty());
  EXPECT_EQ(parse_osis_verse("<note>only</note>").word_strong_numbers, Numbers{});
}

}  // namespace
}  // namespace attn::data
