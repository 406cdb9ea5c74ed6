// Sentences: ICU's boundaries with the language's abbreviations, the rules for line breaks, byte
// offsets through accents and emoji; long sentences cut at clause punctuation, spaces or characters.
// Every expected sentence is worked out by hand.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/error.h"
#include "document/sentences.h"

namespace attn::document {
namespace {

std::vector<std::string> sentences(std::string_view text, const std::string& language) {
  std::vector<std::string> out;
  for (const TextRange& r : split_sentences(text, language)) out.emplace_back(text.substr(r.begin, r.end - r.begin));
  return out;
}

using Strings = std::vector<std::string>;

// ---------------------------------------------------------------- ICU's boundaries

TEST(SplitSentences, EnglishBibleVerses) {
  EXPECT_EQ(
      sentences("And God said, Let there be light: and there was light. And God saw the light, that it was good.",
                "en"),
      (Strings{"And God said, Let there be light: and there was light.", "And God saw the light, that it was good."}));
  EXPECT_EQ(sentences("In the beginning God created the heaven and the earth. And the earth was without form, and "
                      "void; and darkness was upon the face of the deep. And the Spirit of God moved upon the face "
                      "of the waters.",
                      "en"),
            (Strings{"In the beginning God created the heaven and the earth.",
                     "And the earth was without form, and void; and darkness was upon the face of the deep.",
                     "And the Spirit of God moved upon the face of the waters."}));
}

TEST(SplitSentences, SpanishBibleVerses) {
  EXPECT_EQ(sentences("Y dijo Dios: Sea la luz: y fué la luz.", "es"),
            (Strings{"Y dijo Dios: Sea la luz: y fué la luz."}));
  EXPECT_EQ(sentences("Y dijo Dios: Sea la luz: y fué la luz. Y vió Dios que la luz era buena: y apartó Dios la luz "
                      "de las tinieblas. ¿Quién te enseñó? ¡Nadie!",
                      "es"),
            (Strings{"Y dijo Dios: Sea la luz: y fué la luz.",
                     "Y vió Dios que la luz era buena: y apartó Dios la luz de las tinieblas.", "¿Quién te enseñó?",
                     "¡Nadie!"}));
}

TEST(SplitSentences, AbbreviationsOfTheLanguage) {
  EXPECT_EQ(sentences("Mr. Smith went home. He slept.", "en"), (Strings{"Mr. Smith went home.", "He slept."}));
  EXPECT_EQ(sentences("El Sr. García llegó. Se fue.", "es"), (Strings{"El Sr. García llegó.", "Se fue."}));
  EXPECT_EQ(sentences("La Sra. Pérez y la Dra. Ruiz. Se fueron.", "es"),
            (Strings{"La Sra. Pérez y la Dra. Ruiz.", "Se fueron."}));
  // ICU's Spanish data has "p. ej.": no break after "p." (lower case follows) nor after "ej.".
  EXPECT_EQ(sentences("Hay frutas, p. ej. Manzanas y peras. Fin.", "es"),
            (Strings{"Hay frutas, p. ej. Manzanas y peras.", "Fin."}));
  // Another language's abbreviations are not the language's: root rules have none.
  EXPECT_EQ(sentences("Mr. Smith went home.", ""), (Strings{"Mr.", "Smith went home."}));
  EXPECT_EQ(sentences("El Sr. García llegó.", "en"), (Strings{"El Sr.", "García llegó."}));
}

// The abbreviations added to ICU's data: each keeps "<abbreviation> <Capital>" in one sentence.
TEST(SplitSentences, AddedAbbreviations) {
  for (const char* abbreviation : {"Dr.", "Drs.", "e.g.", "i.e.", "cf."}) {
    const std::string text = std::string("We met ") + abbreviation + " Jones there. Then we left.";
    EXPECT_EQ(sentences(text, "en"),
              (Strings{std::string("We met ") + abbreviation + " Jones there.", "Then we left."}))
        << abbreviation;
  }
  for (const char* abbreviation : {"Ud.", "Uds.", "Vd.", "Vds.", "Srs.", "Sres.", "Dres.", "Ing.", "Arq.", "Gral.",
                                   "EE.", "pág.", "págs.", "núm.", "cap."}) {
    const std::string text = std::string("Lo vio el ") + abbreviation + " 12 Pérez. Luego se fue.";
    EXPECT_EQ(sentences(text, "es"),
              (Strings{std::string("Lo vio el ") + abbreviation + " 12 Pérez.", "Luego se fue."}))
        << abbreviation;
  }
  EXPECT_EQ(sentences("Vive en EE. UU. Trabaja allí.", "es"), (Strings{"Vive en EE. UU.", "Trabaja allí."}));
  // Whole words only: "ADr." is not "Dr.", "salud." is not "Ud." (and the match is case-sensitive).
  EXPECT_EQ(sentences("It was ADr. Then.", "en"), (Strings{"It was ADr.", "Then."}));
  EXPECT_EQ(sentences("Es la virtud. Todos.", "es"), (Strings{"Es la virtud.", "Todos."}));
  EXPECT_EQ(sentences("See the dr. Then.", "en"), (Strings{"See the dr.", "Then."}));
  // A no-break space after the title counts as a space; a line break is a hard break all the same.
  EXPECT_EQ(sentences("El Ud.\u00A0Pérez. Fin.", "es"), (Strings{"El Ud.\u00A0Pérez.", "Fin."}));
  EXPECT_EQ(sentences("Dr.\nJones left.", "en"), (Strings{"Dr.", "Jones left."}));
  // Only for their language.
  EXPECT_EQ(sentences("Es grande, e.g. Paris.", "es"), (Strings{"Es grande, e.g.", "Paris."}));
  EXPECT_EQ(sentences("Lo vio el Ud. Pérez.", "en"), (Strings{"Lo vio el Ud.", "Pérez."}));
}

TEST(SplitSentences, NumbersAndVerseReferencesDoNotBreak) {
  EXPECT_EQ(sentences("In 1 Cor. 13:4 love is patient.", "en"), (Strings{"In 1 Cor. 13:4 love is patient."}));
  EXPECT_EQ(sentences("Version 2.5.1 is out. Pi is 3.14 or so.", "en"),
            (Strings{"Version 2.5.1 is out.", "Pi is 3.14 or so."}));
  EXPECT_EQ(sentences("Read John 3:16 today. It costs $1,000.50 now.", "en"),
            (Strings{"Read John 3:16 today.", "It costs $1,000.50 now."}));
}

TEST(SplitSentences, QuotesStayWithTheirSentence) {
  EXPECT_EQ(sentences("He said, \"Go.\" Then he left.", "en"), (Strings{"He said, \"Go.\"", "Then he left."}));
  EXPECT_EQ(sentences("(It was late.) We slept.", "en"), (Strings{"(It was late.)", "We slept."}));
}

// ICU: "..." ends a sentence as a full stop does (before a capital letter); "…" never does.
TEST(SplitSentences, EllipsisAsIcuHasIt) {
  EXPECT_EQ(sentences("Wait... what? Yes... Okay. Fine… Then.", "en"),
            (Strings{"Wait... what?", "Yes...", "Okay.", "Fine… Then."}));
}

// ---------------------------------------------------------------- line breaks and whitespace

TEST(SplitSentences, HeadingsAndListItemsOnePerLine) {
  EXPECT_EQ(sentences("Genesis\nChapter 1\n1 In the beginning God created the heaven and the earth.\n"
                      "2 And the earth was without form, and void.\n",
                      "en"),
            (Strings{"Genesis", "Chapter 1", "1 In the beginning God created the heaven and the earth.",
                     "2 And the earth was without form, and void."}));
  EXPECT_EQ(sentences("Shopping\n- apples\n- pears\n* plums", "en"),
            (Strings{"Shopping", "- apples", "- pears", "* plums"}));
  // Lines that go on in lower case are one sentence, whatever they are.
  EXPECT_EQ(sentences("apples\npears", "en"), (Strings{"apples\npears"}));
}

TEST(SplitSentences, WrappedSentencesStayWhole) {
  const std::string text =
      "And God called the light Day, and the\ndarkness he called Night. And the evening\n"
      "   and the morning were the first day.";
  EXPECT_EQ(sentences(text, "en"), (Strings{"And God called the light Day, and the\ndarkness he called Night.",
                                            "And the evening\n   and the morning were the first day."}));
  EXPECT_EQ(sentences("Y llamó Dios a la luz Día, y a las\ntinieblas llamó Noche.", "es"),
            (Strings{"Y llamó Dios a la luz Día, y a las\ntinieblas llamó Noche."}));
  // A lower-case letter beyond the BMP or with an accent continues too; a digit or a capital does not.
  EXPECT_EQ(sentences("un\nárbol\n\U0001D41Aa\n2 b\nC", "es"), (Strings{"un\nárbol\n\U0001D41Aa", "2 b", "C"}));
}

TEST(SplitSentences, BlankLinesAlwaysEndASentence) {
  EXPECT_EQ(sentences("the first line\n\nthe second line", "en"), (Strings{"the first line", "the second line"}));
  EXPECT_EQ(sentences("the first line\n \t \nthe second line", "en"), (Strings{"the first line", "the second line"}));
  EXPECT_EQ(sentences("one\r\n\r\ntwo", "en"), (Strings{"one", "two"}));
  // U+2029 PARAGRAPH SEPARATOR is a blank line.
  EXPECT_EQ(sentences("one\u2029two", "en"), (Strings{"one", "two"}));
}

TEST(SplitSentences, CarriageReturnsBehaveLikeLineFeeds) {
  const std::string lf = "Genesis\nAnd God called the light Day, and the\ndarkness he called Night.\n\nthe end";
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const Strings expected = {"Genesis", "And God called the light Day, and the\ndarkness he called Night.", "the end"};
  EXPECT_EQ(sentences(lf, "en"), expected);
  EXPECT_EQ(sentences(crlf, "en"),
            (Strings{"Genesis", "And God called the light Day, and the\r\ndarkness he called Night.", "the end"}));
  // A lone CR, NEXT LINE and LINE SEPARATOR are line breaks too.
  EXPECT_EQ(sentences("Title\rText\rgoes on", "en"), (Strings{"Title", "Text\rgoes on"}));
  EXPECT_EQ(sentences("Title\u0085Text\u2028goes on\u2028End", "en"), (Strings{"Title", "Text\u2028goes on", "End"}));
}

TEST(SplitSentences, TabsAreWhitespaceNotBreaks) {
  EXPECT_EQ(sentences("One\ttwo three.\tFour\tfive.", "en"), (Strings{"One\ttwo three.", "Four\tfive."}));
}

TEST(SplitSentences, WhitespaceAtTheEndsIsLeftBetweenSentences) {
  const std::string text = "  Hello there.   Bye.  \n";
  //                        0123456789012345678901
  EXPECT_EQ(split_sentences(text, "en"), (std::vector<TextRange>{{2, 14}, {17, 21}}));
  // U+00A0 and U+3000 (two and three bytes) are whitespace.
  const std::string nbsp = "\u00A0Hello.\u00A0World.\u3000";
  // bytes: C2 A0 | Hello. [2, 8) | C2 A0 | World. [10, 16) | E3 80 80
  EXPECT_EQ(split_sentences(nbsp, "en"), (std::vector<TextRange>{{2, 8}, {10, 16}}));
  EXPECT_EQ(sentences("Hello\u00A0there. Bye.", "en"), (Strings{"Hello\u00A0there.", "Bye."}));
}

TEST(SplitSentences, EmptyAndWhitespaceOnlyTextHaveNoSentences) {
  EXPECT_TRUE(split_sentences("", "en").empty());
  EXPECT_TRUE(split_sentences(" \t\n\r\n \u00A0\u3000\u2029 ", "en").empty());
  EXPECT_TRUE(split_sentences("\n\n\n", "es").empty());
}

// ---------------------------------------------------------------- bytes, languages, errors

TEST(SplitSentences, OffsetsAreUtf8BytesThroughAccentsAndEmoji) {
  const std::string text = "Él dijo: «¡Hola!» Luego se fue. 😀 Fin.";
  // "Él" 3 bytes, " dijo:" 6, " " 1, "«" 2, "¡" 2, "Hola" 4, "!" 1, "»" 2: the first ends at 21;
  // "Luego se fue." [22, 35); "😀" four bytes from 36, " Fin." to 45.
  EXPECT_EQ(split_sentences(text, "es"), (std::vector<TextRange>{{0, 21}, {22, 35}, {36, 45}}));
  const std::string emoji = "😀😀. 😀 Sí. 𝐀𝐁𝐂.";
  // 😀😀. [0, 9); 😀 Sí. [10, 19) (Sí: 3 bytes); 𝐀𝐁𝐂. [20, 33) (three 4-byte letters and the stop)
  EXPECT_EQ(split_sentences(emoji, "es"), (std::vector<TextRange>{{0, 9}, {10, 19}, {20, 33}}));
}

TEST(SplitSentences, UnknownLanguagesGetRootRules) {
  for (const std::string& language : Strings{"", "xx", "@@;x", "en@ss=none", "zz-ZZ", std::string(100, 'a')}) {
    EXPECT_EQ(sentences("Mr. Smith left. Bye.", language), (Strings{"Mr.", "Smith left.", "Bye."})) << language;
  }
  // Region tags and ICU's underscores are the language.
  EXPECT_EQ(sentences("Mr. Smith left. Bye.", "en-GB"), (Strings{"Mr. Smith left.", "Bye."}));
  EXPECT_EQ(sentences("Mr. Smith left. Bye.", "en_US"), (Strings{"Mr. Smith left.", "Bye."}));
}

TEST(SplitSentences, InvalidUtf8NamesTheByte) {
  try {
    split_sentences(
        "abc\xFF"
        "def",
        "en");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte 4"), std::string::npos) << e.what();
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  }
  EXPECT_THROW(split_sentences("Ok. \xC3(", "en"), Error);               // a lead byte without its continuation
  EXPECT_THROW(split_sentences("\xED\xA0\x80 surrogate", "en"), Error);  // an encoded surrogate
}

// Each thread has its own iterators: threads split at once, each getting what one alone gets.
TEST(SplitSentences, ThreadsSplitAtOnce) {
  const std::string en = "Mr. Smith went home. He slept.";
  const std::string es = "El Sr. García llegó. Se fue.";
  const auto en_expected = split_sentences(en, "en");
  const auto es_expected = split_sentences(es, "es");
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (t % 2 ? split_sentences(en, "en") != en_expected : split_sentences(es, "es") != es_expected) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SplitSentences, ALongTextIsSplitInLinearishTime) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "And God saw the light, that it was good.\n";
  const auto ranges = split_sentences(text, "en");
  ASSERT_EQ(ranges.size(), 20000u);
  EXPECT_EQ(ranges[1], (TextRange{41, 81}));  // 40 bytes and a line feed each
}

// ---------------------------------------------------------------- long sentences

int words(std::string_view text) {
  int n = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

int characters(std::string_view text) {
  int n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

Strings pieces(std::string_view text, TextRange sentence, int max_tokens,
               const std::function<int(std::string_view)>& count) {
  Strings out;
  for (const TextRange& r : split_long_sentence(text, sentence, max_tokens, count)) {
    out.emplace_back(text.substr(r.begin, r.end - r.begin));
  }
  return out;
}

Strings pieces(std::string_view text, int max_tokens, const std::function<int(std::string_view)>& count) {
  return pieces(text, {0, text.size()}, max_tokens, count);
}

TEST(SplitLongSentence, ASentenceThatFitsIsOnePiece) {
  const std::string text = "And God saw the light, that it was good.";
  EXPECT_EQ(split_long_sentence(text, {0, text.size()}, 9, words), (std::vector<TextRange>{{0, text.size()}}));
  EXPECT_EQ(split_long_sentence(text, {4, 11}, 2, words), (std::vector<TextRange>{{4, 11}}));  // "God saw"
  // Whitespace at the ends of the range is not part of the piece.
  EXPECT_EQ(split_long_sentence(text, {3, 12}, 2, words), (std::vector<TextRange>{{4, 11}}));
}

TEST(SplitLongSentence, CutsAfterClausePunctuation) {
  // Five words at most: "And God said, Let there" fits, its last punctuation is "said,".
  EXPECT_EQ(pieces("And God said, Let there be light: and there was light.", 5, words),
            (Strings{"And God said,", "Let there be light:", "and there was light."}));
  EXPECT_EQ(pieces("Y dijo Dios; Sea la luz — y fué la luz.", 4, words),
            (Strings{"Y dijo Dios;", "Sea la luz —", "y fué la luz."}));
  // A dash cuts with or without spaces, the dash with the left piece.
  EXPECT_EQ(pieces("word—word—word", 6, characters), (Strings{"word—", "word—", "word"}));
  EXPECT_EQ(pieces("one–two three", 10, characters), (Strings{"one–", "two three"}));
}

TEST(SplitLongSentence, CutsAtSpacesWithoutPunctuation) {
  EXPECT_EQ(pieces("one two three four five six seven", 3, words),
            (Strings{"one two three", "four five six", "seven"}));
  // A comma or colon inside a number is not a clause: "1,000" and "3:16" stay whole.
  EXPECT_EQ(pieces("Pay 1,000 pounds now please", 12, characters), (Strings{"Pay 1,000", "pounds now", "please"}));
  EXPECT_EQ(pieces("Read John 3:16 today", 14, characters), (Strings{"Read John 3:16", "today"}));
  // A no-break space is not a place to cut.
  EXPECT_EQ(pieces("ab 10\u00A0km far", 7, characters), (Strings{"ab", "10\u00A0km", "far"}));
}

TEST(SplitLongSentence, CutsOneLongWordAtCharacters) {
  EXPECT_EQ(pieces("abcdefghij", 4, characters), (Strings{"abcd", "efgh", "ij"}));
  EXPECT_EQ(pieces("ñañañaña", 3, characters), (Strings{"ñañ", "aña", "ña"}));
  EXPECT_EQ(pieces("😀😀😀 ok", 2, characters), (Strings{"😀😀", "😀", "ok"}));
}

TEST(SplitLongSentence, WhitespaceAtTheCutsIsLeftBetweenPieces) {
  const std::string text = "  one   two\tthree  ";
  //                        0123456789012345678
  EXPECT_EQ(split_long_sentence(text, {0, text.size()}, 1, words), (std::vector<TextRange>{{2, 5}, {8, 11}, {12, 17}}));
  // Within a larger text the ranges are the text's bytes.
  // "And God said," [8, 21), "Let there be" [22, 34), "light." [35, 41).
  const std::string verse = "Gen 1:3 And God said, Let there be light.";
  EXPECT_EQ(split_long_sentence(verse, {8, verse.size()}, 3, words),
            (std::vector<TextRange>{{8, 21}, {22, 34}, {35, 41}}));
}

TEST(SplitLongSentence, ACharacterThatAloneDoesNotFitIsAPieceAlone) {
  auto expensive = [](std::string_view text) { return text.empty() ? 0 : 10; };
  EXPECT_EQ(pieces("ab c", 1, expensive), (Strings{"a", "b", "c"}));
}

TEST(SplitLongSentence, EmptyOrBlankRangesHaveNoPieces) {
  EXPECT_TRUE(split_long_sentence("", {0, 0}, 1, words).empty());
  EXPECT_TRUE(split_long_sentence(" \t\n", {0, 3}, 1, words).empty());
}

TEST(SplitLongSentence, BadArgumentsAreErrors) {
  EXPECT_THROW(split_long_sentence("abc", {0, 3}, 0, words), Error);
  EXPECT_THROW(split_long_sentence("abc", {0, 4}, 1, words), Error);
  EXPECT_THROW(split_long_sentence("abc", {2, 1}, 1, words), Error);
  EXPECT_THROW(split_long_sentence("a\xFF", {0, 2}, 1, words), Error);
  EXPECT_THROW(split_long_sentence("ñ", {1, 2}, 1, words), Error);  // starts inside a character
}

// The pieces: in order, not overlapping, inside the sentence, trimmed, non-empty, each fitting unless
// it is one character, and between them only whitespace.
void expect_cover(std::string_view text, TextRange sentence, const std::vector<TextRange>& ranges, int max_tokens,
                  const std::function<int(std::string_view)>& count) {
  std::size_t at = sentence.begin;
  for (const TextRange& r : ranges) {
    ASSERT_LE(at, r.begin);
    ASSERT_LT(r.begin, r.end);
    ASSERT_LE(r.end, sentence.end);
    for (std::size_t k = at; k < r.begin; ++k) ASSERT_TRUE(text[k] == ' ' || text[k] == '\n') << k;
    const std::string_view piece = text.substr(r.begin, r.end - r.begin);
    ASSERT_NE(piece.front(), ' ');
    ASSERT_NE(piece.back(), ' ');
    if (characters(piece) > 1) {
      ASSERT_LE(count(piece), max_tokens) << piece;
    }
    at = r.end;
  }
  for (std::size_t k = at; k < sentence.end; ++k) ASSERT_TRUE(text[k] == ' ' || text[k] == '\n') << k;
}

TEST(SplitLongSentence, CountIsCalledLogarithmicallyOftenPerPiece) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += i % 7 == 6 ? "word, " : "word ";
  text += "end.";
  long calls = 0;
  long counted = 0;
  auto counting = [&](std::string_view piece) {
    ++calls;
    counted += static_cast<long>(piece.size());
    return words(piece);
  };
  const auto ranges = split_long_sentence(text, {0, text.size()}, 10, counting);
  expect_cover(text, {0, text.size()}, ranges, 10, words);
  const double n = static_cast<double>(characters(text));
  EXPECT_LE(calls, static_cast<long>(ranges.size()) * static_cast<long>(2 * std::log2(n) + 5));
  // A count that grows with the text: each piece's search reads a few times the piece's length.
  EXPECT_LE(counted, static_cast<long>(text.size() * (2 * std::log2(n) + 5)));
  // Each piece is cut after its last comma: "word word word word word word word," is 7 words.
  EXPECT_EQ(text.substr(ranges[0].begin, ranges[0].end - ranges[0].begin), "word word word word word word word,");
}

TEST(SplitLongSentence, AnyCountTerminatesAndCovers) {
  const std::string text = "Y dijo Dios: Sea la luz: y fué la luz, ñandú 😀 — a,b;c  end";
  // Non-monotonic counts: odd lengths cost a lot, or a count that ignores the text.
  const std::vector<std::function<int(std::string_view)>> counts = {
      [](std::string_view t) { return t.size() % 2 ? 100 : 1; },
      [](std::string_view t) { return static_cast<int>((t.size() * 7919) % 13); },
      [](std::string_view) { return 1000; },
      words,
      characters,
  };
  for (const auto& count : counts) {
    for (int max_tokens : {1, 2, 3, 5, 8, 100}) {
      const auto ranges = split_long_sentence(text, {0, text.size()}, max_tokens, count);
      expect_cover(text, {0, text.size()}, ranges, max_tokens, count);
    }
  }
}

}  // namespace
}  // namespace attn::document
