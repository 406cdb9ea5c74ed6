#include "data/vocabulary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "core/error.h"
#include "data/vocabulary_training.h"
#include "data_test_support.h"

namespace attn::data {
namespace {

using namespace attn::testing;

// Lines the round trip must reproduce byte for byte; most hold text the vocabulary never saw.
const std::vector<std::string> kVariedText = {
    "In the beginning God created the heaven and the earth.",
    "EN el principio crió Dios los cielos y la tierra.",
    "¿Dónde está Abel tu hermano? ¡Y él respondió: No sé!",
    "Y llamó Adam el nombre de su mujer, Eva; por cuanto ella era madre de todos los vivientes.",
    "Ñandú, pingüino, acción, corazón, él, también: áéíóú ÁÉÍÓÚ ü Ü ñ Ñ ç",
    "And Methuselah lived an hundred eighty and seven years, and begat Lamech (Gen 5:25-26).",
    "Numbers 0123456789, 3.14159, 1,000,000 and 42nd; 7% of 365 days.",
    "Punctuation: \"quoted\" 'single' (round) [square] {curly} <angle> ... -- — – « » „ “ ” ‘ ’ … ¶ § †",
    "Hebrew letters: שָׁלוֹם בְּרֵאשִׁית א ב ג",
    "Greek: Ἐν ἀρχῇ ἦν ὁ λόγος; Cyrillic: В начале было Слово",
    "CJK 太初有道 and emoji 🙂🕊️👨‍👩‍👧 and a musical symbol 𝄞",
    "Ligature ﬁ, fullwidth ＡＢＣ, combining e\u0301 vs precomposed é, Å vs A\u030A",
    "No-break\u00A0space, thin\u2009space, zero\u200Bwidth, soft\u00ADhyphen",
    "Tab\tseparated\tfields and a control \x01 character and DEL \x7F",
    " leading space",
    "trailing space ",
    "double  spaces   and    more",
    "   ",
    "",
    "x",
    "Text that looks special: <s> </s> <pad> <unk> <0x41> \u2047",
};

class VocabularyTest : public FixtureVocabularyTest {};

TEST_F(VocabularyTest, SpecialIdsAreTheDocumentedOnes) {
  EXPECT_EQ(kPadId, 0);
  EXPECT_EQ(kUnkId, 1);
  EXPECT_EQ(kBosId, 2);
  EXPECT_EQ(kEosId, 3);
  EXPECT_EQ(vocabulary().piece(0), "<pad>");
  EXPECT_EQ(vocabulary().piece(1), "<unk>");
  EXPECT_EQ(vocabulary().piece(2), "<s>");
  EXPECT_EQ(vocabulary().piece(3), "</s>");
  EXPECT_EQ(vocabulary().size(), 1000);
}

TEST_F(VocabularyTest, RoundTripIsExactAndIdsAreOrdinaryTokens) {
  for (const auto& line : kVariedText) {
    const auto ids = vocabulary().encode(line);
    for (const auto id : ids) {
      EXPECT_GE(id, 0) << line;
      EXPECT_LT(id, vocabulary().size()) << line;
      EXPECT_NE(id, 0) << "pad emitted for: " << line;
      EXPECT_NE(id, 1) << "unk emitted for: " << line;  // byte fallback covers every character
      EXPECT_NE(id, 2) << "bos emitted for: " << line;
      EXPECT_NE(id, 3) << "eos emitted for: " << line;
    }
    EXPECT_EQ(vocabulary().decode(ids), line);
    EXPECT_EQ(vocabulary().decode_pieces(vocabulary().encode_pieces(line)), line);
  }
}

TEST_F(VocabularyTest, RoundTripIsExactOnTheTrainingText) {
  for (const auto* name : {"genesis.en", "genesis.es"}) {
    std::istringstream text(slurp(fixture(name)));
    std::string line;
    while (std::getline(text, line)) EXPECT_EQ(vocabulary().decode(vocabulary().encode(line)), line);
  }
}

TEST_F(VocabularyTest, UnseenCharactersBecomeTheirUtf8Bytes) {
  // U+05D0 HEBREW LETTER ALEF is D7 90 in UTF-8; U+1F642 is F0 9F 99 82. Neither is in Genesis.
  EXPECT_EQ(vocabulary().encode_pieces("א"), (std::vector<std::string>{"▁", "<0xD7>", "<0x90>"}));
  EXPECT_EQ(vocabulary().encode_pieces("🙂"),
            (std::vector<std::string>{"▁", "<0xF0>", "<0x9F>", "<0x99>", "<0x82>"}));
  const auto ids = vocabulary().encode("א");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_FALSE(vocabulary().is_byte(ids[0]));
  EXPECT_TRUE(vocabulary().is_byte(ids[1]));
  EXPECT_TRUE(vocabulary().is_byte(ids[2]));
  EXPECT_EQ(vocabulary().piece_id("<0xD7>"), ids[1]);
}

// A model can generate the byte pieces of a line break (<0x0A>, <0x0D>): decode gives them back,
// but a translation is one line of a line-based output (`attn translate`, the service's lines), so
// decode_line makes each a space.
TEST_F(VocabularyTest, ALineBreakAModelGeneratesIsASpaceInATranslationLine) {
  const auto& v = vocabulary();
  const std::int32_t lf = v.piece_id("<0x0A>"), cr = v.piece_id("<0x0D>");
  ASSERT_TRUE(v.is_byte(lf) && v.is_byte(cr));
  std::vector<std::int32_t> ids = v.encode("In the beginning");
  ids.push_back(lf);
  const std::vector<std::int32_t> rest = v.encode("God");
  ids.push_back(cr);
  ids.push_back(lf);
  ids.insert(ids.end(), rest.begin(), rest.end());
  const std::string text = v.decode(ids);
  EXPECT_NE(text.find('\n'), std::string::npos) << text;
  const std::string line = v.decode_line(ids);
  EXPECT_EQ(line.find_first_of("\r\n"), std::string::npos) << line;
  std::string expected = text;
  std::replace(expected.begin(), expected.end(), '\n', ' ');
  std::replace(expected.begin(), expected.end(), '\r', ' ');
  EXPECT_EQ(line, expected);
  EXPECT_EQ(v.decode_line(v.encode("Jesus wept.")), "Jesus wept.");
}

TEST_F(VocabularyTest, TheSpaceMarkerIsTheOneDocumentedException) {
  // U+2581 is SentencePiece's own space marker: it comes back as a space (vocabulary.h).
  EXPECT_EQ(vocabulary().decode(vocabulary().encode("a\u2581b")), "a b");
}

TEST_F(VocabularyTest, DecodeSkipsPadBosAndEosAndRejectsUnknownIds) {
  const std::string text = "And God saw the light, that it was good.";
  auto ids = vocabulary().encode(text);
  ids.insert(ids.begin(), 2);
  ids.push_back(3);
  ids.push_back(0);
  ids.push_back(0);
  EXPECT_EQ(vocabulary().decode(ids), text);
  const std::vector<std::int32_t> bad = {5, 1000};
  EXPECT_NE(message_of([&] { vocabulary().decode(bad); }).find("token id 1000 is outside the vocabulary [0, 1000)"),
            std::string::npos);
  EXPECT_THROW(vocabulary().piece(-1), Error);
  const std::vector<std::string> pieces = {"▁God", "▁zzzzzz"};
  EXPECT_NE(message_of([&] { vocabulary().decode_pieces(pieces); }).find("\"▁zzzzzz\" is not a piece"),
            std::string::npos);
}

TEST_F(VocabularyTest, ParallelEncodingMatchesLineByLine) {
  std::vector<std::string> lines;
  for (int copy = 0; copy < 50; ++copy) lines.insert(lines.end(), kVariedText.begin(), kVariedText.end());
  const auto all = vocabulary().encode_lines(lines);
  ASSERT_EQ(all.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(all[i], vocabulary().encode(lines[i])) << lines[i];
}

TEST_F(VocabularyTest, VocabFileListsEveryPieceInIdOrder) {
  std::istringstream vocab(slurp(dir() / "vocab.vocab"));
  std::string line;
  std::int32_t id = 0;
  for (; std::getline(vocab, line); ++id) {
    ASSERT_LT(id, vocabulary().size());
    EXPECT_EQ(line.substr(0, line.find('\t')), vocabulary().piece(id));
  }
  EXPECT_EQ(id, 1000);
}

TEST(VocabularyLoad, NamesTheFileThatIsMissingOrCorrupt) {
  const auto dir = fresh_temp_dir("vocabulary_load");
  const auto missing = dir / "missing.model";
  EXPECT_NE(message_of([&] { Vocabulary::load(missing); }).find(missing.string() + ": cannot open"), std::string::npos);

  const auto corrupt = dir / "corrupt.model";
  write_file_atomic(corrupt, "this is not a protobuf \xff\xfe\x01\x02");
  EXPECT_NE(message_of([&] { Vocabulary::load(corrupt); }).find(corrupt.string() + ": not a valid SentencePiece model"),
            std::string::npos);

  const auto empty = dir / "empty.model";
  write_file_atomic(empty, "");
  EXPECT_NE(message_of([&] { Vocabulary::load(empty); }).find(empty.string() + ": not a SentencePiece model"),
            std::string::npos);

  // A truncated real model.
  const auto model = train_fixture_vocabulary(dir);
  const auto truncated = dir / "truncated.model";
  const auto bytes = slurp(model);
  write_file_atomic(truncated, bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(message_of([&] { Vocabulary::load(truncated); }).find(truncated.string() + ":"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(VocabularyTraining, ReportsWhatItMeasured) {
  const auto dir = fresh_temp_dir("vocabulary_training");
  VocabularyTrainingOptions options;
  options.inputs = {fixture("genesis.en"), fixture("genesis.es")};
  options.model_prefix = dir / "bible";
  options.vocab_size = 600;
  const auto report = train_vocabulary(options);
  EXPECT_EQ(report.model_file, dir / "bible.model");
  EXPECT_EQ(report.vocab_file, dir / "bible.vocab");
  EXPECT_TRUE(std::filesystem::exists(report.model_file));
  EXPECT_EQ(report.vocab_size, 600);
  ASSERT_EQ(report.inputs.size(), 2u);
  for (const auto& input : report.inputs) {
    EXPECT_EQ(input.sentences, 120u);
    // At least one piece per word and no more pieces than bytes: Genesis has ~28 words per verse.
    EXPECT_GT(input.pieces_per_sentence(), 20.0);
    EXPECT_LT(input.pieces_per_sentence(), 130.0);
    EXPECT_EQ(input.byte_pieces, 0u);  // every character of the training text is in the vocabulary
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2) << "temporary files left behind";
  std::filesystem::remove_all(dir);
}

TEST(VocabularyTraining, NamesBadInputAndImpossibleSizes) {
  const auto dir = fresh_temp_dir("vocabulary_training_errors");
  VocabularyTrainingOptions options;
  options.model_prefix = dir / "vocab";
  options.inputs = {dir / "bad.txt"};
  write_lines(dir / "bad.txt", {"good line", "bad \xC3( line"});
  EXPECT_NE(message_of([&] { train_vocabulary(options); }).find("bad.txt:2: invalid UTF-8"), std::string::npos);

  options.inputs = {fixture("genesis.en")};
  options.vocab_size = 100000;
  EXPECT_NE(message_of([&] { train_vocabulary(options); }).find("Vocabulary size too high"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "vocab.model"));
  std::filesystem::remove_all(dir);
}

// The `attn vocab` commands, end to end.
TEST(VocabCommand, TrainEncodeDecodeRoundTrip) {
  const auto dir = fresh_temp_dir("vocab_command");
  const auto run = [&](const std::string& arguments) {
    return testing::run_attn(arguments + " > " + (dir / "out.txt").string() + " 2> " + (dir / "err.txt").string())
        .exit_code;
  };
  ASSERT_EQ(run("vocab train --size 800 --model " + (dir / "m").string() + " --input " +
                fixture("genesis.en").string() + " " + fixture("genesis.es").string()),
            0)
      << slurp(dir / "err.txt");
  const auto statistics = slurp(dir / "out.txt");
  EXPECT_NE(statistics.find("vocabulary: 800 pieces"), std::string::npos) << statistics;
  EXPECT_NE(statistics.find("genesis.es: 120 sentences"), std::string::npos) << statistics;
  EXPECT_NE(statistics.find("pieces per sentence"), std::string::npos) << statistics;
  EXPECT_EQ(slurp(dir / "err.txt"), "") << "training should be quiet without --verbose";

  write_lines(dir / "text.txt", kVariedText);
  const auto model = (dir / "m.model").string();
  for (const std::string pieces : {"", " --pieces"}) {
    ASSERT_EQ(run("vocab encode --model " + model + pieces + " < " + (dir / "text.txt").string()), 0)
        << slurp(dir / "err.txt");
    std::filesystem::rename(dir / "out.txt", dir / "encoded.txt");
    ASSERT_EQ(run("vocab decode --model " + model + pieces + " < " + (dir / "encoded.txt").string()), 0)
        << slurp(dir / "err.txt");
    EXPECT_EQ(slurp(dir / "out.txt"), slurp(dir / "text.txt")) << "with" << pieces;
  }

  write_lines(dir / "ids.txt", {"5 6", "5 999999"});
  EXPECT_NE(run("vocab decode --model " + model + " < " + (dir / "ids.txt").string()), 0);
  EXPECT_NE(slurp(dir / "err.txt").find("<stdin>:2: "), std::string::npos) << slurp(dir / "err.txt");

  EXPECT_NE(run("vocab encode --model " + (dir / "nothing.model").string() + " < /dev/null"), 0);
  EXPECT_NE(slurp(dir / "err.txt").find((dir / "nothing.model").string()), std::string::npos) << slurp(dir / "err.txt");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn::data
