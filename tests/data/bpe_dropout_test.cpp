// BPE-dropout against SentencePiece itself: with no dropout the cut must be SentencePiece's to the
// id, with dropout merges must be skipped as often as SentencePiece's own BPE-dropout
// (SampleEncode) skips them, and every cut must decode to the text it came from.
#include "data/bpe_dropout.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <sentencepiece_processor.h>

#include <cmath>

#include "common/temp_dir.h"
#include "core/text_file.h"
#include "data/parallel_corpus.h"
#include "data_test_support.h"

namespace attn::data {
namespace {

using namespace attn::testing;

// Genesis 1-5 in both languages (the vocabulary's own text), then lines with characters it never
// saw (byte fallback), spaces where SentencePiece treats them specially, and nothing at all.
std::vector<std::string> test_lines() {
  std::vector<std::string> lines = read_text_lines(fixture("genesis.en"));
  for (auto& line : read_text_lines(fixture("genesis.es"))) lines.push_back(line);
  for (const char* line :
       {"Ñandú, pingüino, acción, corazón: áéíóú ÁÉÍÓÚ ü Ü ñ Ñ ç",
        "Hebrew שָׁלוֹם, Greek Ἐν ἀρχῇ, CJK 太初有道, emoji 🙂🕊️ and 𝄞",
        "Tab\tseparated and a control \x01 character", " leading space", "trailing space ",
        "double  spaces   and    more",
        "runs of equal pairs, where the leftmost joins first: lll llll ssss eee rrr nnnn aaaaa", "   ", "", "x",
        "<s> </s> <unk> <0x41> text"})
    lines.push_back(line);
  return lines;
}

class BpeDropoutTest : public FixtureVocabularyTest {};

// Without dropout every merge SentencePiece makes is made, in its order: the same ids for every
// line, including byte pieces for characters the vocabulary lacks.
TEST_F(BpeDropoutTest, WithoutDropoutCutsExactlyAsSentencePiece) {
  const BpeDropout bpe(vocabulary());
  std::size_t bytes = 0, merged = 0;
  for (const auto& line : test_lines()) {
    const auto expected = vocabulary().encode(line);
    EXPECT_EQ(bpe.encode(line, 0.0, 1), expected) << line;
    for (const auto id : expected) {
      bytes += vocabulary().is_byte(id);
      merged += !vocabulary().is_byte(id) && vocabulary().piece(id).size() > 3;
    }
  }
  EXPECT_GT(bytes, 10u);     // the byte fallback was exercised
  EXPECT_GT(merged, 1000u);  // and long merges
}

// Where equal pairs overlap ("zzz": "zz" twice), SentencePiece joins the leftmost first. The
// Genesis vocabulary has no piece of a doubled character, so this one learns some from runs.
TEST_F(BpeDropoutTest, OverlappingEqualPairsJoinLeftmostFirstAsSentencePiece) {
  std::vector<std::string> runs;
  for (int i = 0; i < 300; ++i)
    runs.push_back("mm zzz rrrr mmmmm zz ooooooo " + std::string(static_cast<std::size_t>(1 + i % 9), 'z') + " " +
                   std::string(static_cast<std::size_t>(1 + i % 7), 'r'));
  write_lines(dir() / "runs.txt", runs);
  VocabularyTrainingOptions options;
  options.inputs = {fixture("genesis.en"), dir() / "runs.txt"};
  options.model_prefix = dir() / "runs";
  options.vocab_size = 1000;
  const Vocabulary with_runs = Vocabulary::load(train_vocabulary(options).model_file);
  ASSERT_NE(with_runs.piece_id("zz"), kUnkId);
  const BpeDropout bpe(with_runs);
  std::size_t tested = 0;
  for (int n = 1; n < 16; ++n) {
    for (const char c : std::string("zrmo")) {
      const auto length = static_cast<std::size_t>(n);
      const std::string line = std::string("x").append(length, c).append(" ").append(length, c);
      EXPECT_EQ(bpe.encode(line, 0.0, 1), with_runs.encode(line)) << line;
      ++tested;
    }
  }
  EXPECT_EQ(tested, 60u);
}

// Dropout 1 skips every merge: one piece per character (or its bytes), and the text comes back.
TEST_F(BpeDropoutTest, FullDropoutLeavesSingleCharacters) {
  const BpeDropout bpe(vocabulary());
  for (const auto& line : test_lines()) {
    const auto ids = bpe.encode(line, 1.0, 1);
    EXPECT_EQ(vocabulary().decode(ids), line);
    for (const auto id : ids) {
      if (vocabulary().is_byte(id)) continue;
      const std::string& piece = vocabulary().piece(id);
      const std::size_t length = (piece[0] & 0x80) == 0      ? 1
                                 : (piece[0] & 0xE0) == 0xC0 ? 2
                                 : (piece[0] & 0xF0) == 0xE0 ? 3
                                                             : 4;
      EXPECT_EQ(piece.size(), length) << "\"" << piece << "\" in " << line;
    }
  }
}

// Every cut at every rate decodes to its text; a cut follows from its seed alone.
TEST_F(BpeDropoutTest, CutsDecodeToTheirTextAndFollowFromTheSeed) {
  const BpeDropout bpe(vocabulary());
  int differ = 0;
  for (const double dropout : {0.05, 0.1, 0.3, 0.7}) {
    for (const auto& line : test_lines()) {
      const auto a = bpe.encode(line, dropout, 7);
      EXPECT_EQ(vocabulary().decode(a), line) << dropout;
      EXPECT_EQ(bpe.encode(line, dropout, 7), a);
      differ += bpe.encode(line, dropout, 8) != a;
    }
  }
  EXPECT_GT(differ, 400);
}

// SentencePiece's own BPE-dropout (SampleEncode, whose draws cannot be seeded per line) gives the
// independent measure: over many draws of every line, the mean number of pieces must agree within
// 1% at each rate (they agree to ~0.05%), where dropout 0.1 adds ~27% pieces and 0.3 ~75%.
TEST_F(BpeDropoutTest, SkipsMergesAsOftenAsSentencePiecesOwnDropout) {
  const BpeDropout bpe(vocabulary());
  sentencepiece::SentencePieceProcessor reference;
  ASSERT_TRUE(reference.LoadFromSerializedProto(vocabulary().model_bytes()).ok());
  std::vector<std::string> lines = read_text_lines(fixture("genesis.en"));
  for (auto& line : read_text_lines(fixture("genesis.es"))) lines.push_back(line);
  constexpr int kDraws = 40;
  double plain = 0;
  for (const auto& line : lines) plain += static_cast<double>(vocabulary().encode(line).size());
  for (const double dropout : {0.1, 0.3}) {
    double ours = 0, theirs = 0;
    std::uint64_t seed = 0;
    for (const auto& line : lines) {
      for (int draw = 0; draw < kDraws; ++draw) {
        ours += static_cast<double>(bpe.encode(line, dropout, ++seed).size());
        std::vector<int> ids;
        ASSERT_TRUE(reference.SampleEncode(line, -1, static_cast<float>(dropout), &ids).ok());
        theirs += static_cast<double>(ids.size());
      }
    }
    ours /= kDraws;
    theirs /= kDraws;
    SCOPED_TRACE("dropout " + std::to_string(dropout) + ": " + std::to_string(ours) + " pieces (SentencePiece " +
                 std::to_string(theirs) + ", without dropout " + std::to_string(plain) + ")");
    EXPECT_GT(theirs, plain * (1 + dropout));  // the rate is felt
    EXPECT_NEAR(ours / theirs, 1.0, 0.01);
  }
}

// A corpus cut again: the same pairs, each side decoding to its text, the cut independent of the
// thread count, and a line the dropout would make too long keeping its usual pieces.
TEST_F(BpeDropoutTest, ResampledCorpusKeepsEveryPairAndItsLimit) {
  const BpeDropout bpe(vocabulary());
  ParallelCorpusOptions options;
  options.source_file = fixture("genesis.en");
  options.target_file = fixture("genesis.es");
  options.keep_text = true;
  const auto corpus = ParallelCorpus::load(vocabulary(), options);
  const auto source_text = read_text_lines(fixture("genesis.en"));
  const auto target_text = read_text_lines(fixture("genesis.es"));
  ASSERT_EQ(corpus.size(), source_text.size());

  omp_set_num_threads(1);
  const auto one = corpus.resampled(bpe, 0.2, 5);
  omp_set_num_threads(2);
  const auto two = corpus.resampled(bpe, 0.2, 5);
  ASSERT_EQ(one.size(), corpus.size());
  EXPECT_GT(one.report().source_tokens, corpus.report().source_tokens);
  EXPECT_GT(one.report().target_tokens, corpus.report().target_tokens);
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    EXPECT_EQ(vocabulary().decode(one.source(i)), source_text[i]);
    EXPECT_EQ(vocabulary().decode(one.target(i)), target_text[i]);
    EXPECT_TRUE(std::ranges::equal(one.source(i), two.source(i)));
    EXPECT_TRUE(std::ranges::equal(one.target(i), two.target(i)));
    EXPECT_EQ(one.line_number(i), corpus.line_number(i));
  }
  // With a limit just above the longest usual line, the lines dropout lengthens past it keep their
  // usual pieces and the others are cut anew.
  std::size_t longest = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i)
    longest = std::max({longest, corpus.source_length(i), corpus.target_length(i)});
  options.max_tokens = longest + 1;
  const auto limited = ParallelCorpus::load(vocabulary(), options).resampled(bpe, 0.5, 5);
  ASSERT_EQ(limited.size(), corpus.size());
  int kept_usual = 0, cut_anew = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    EXPECT_LE(limited.source_length(i) + 1, options.max_tokens);
    const bool usual = std::ranges::equal(limited.source(i), corpus.source(i));
    kept_usual += usual;
    cut_anew += !usual;
  }
  EXPECT_GT(kept_usual, 0);
  EXPECT_GT(cut_anew, 0);
  // Without the text there is nothing to cut again.
  options.keep_text = false;
  const auto textless = ParallelCorpus::load(vocabulary(), options);
  EXPECT_NE(message_of([&] { (void)textless.resampled(bpe, 0.1, 1); }).find("keep_text"), std::string::npos);
}

}  // namespace
}  // namespace attn::data
