#include "data/parallel_corpus.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/count_of.h"
#include "common/temp_dir.h"
#include "core/error.h"
#include "data_test_support.h"

namespace attn::data {
namespace {

using namespace attn::testing;

std::string many_words(int n) {
  std::string text = "word";
  for (int i = 1; i < n; ++i) text += " word" + std::to_string(i);
  return text;
}

class ParallelCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    vocabulary_ = std::make_unique<Vocabulary>(Vocabulary::load(train_fixture_vocabulary(dir_)));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes source.txt and target.txt and returns options to read them, warnings into log_.
  ParallelCorpusOptions write_corpus(const std::vector<std::string>& source, const std::vector<std::string>& target) {
    write_lines(dir_ / "source.txt", source);
    write_lines(dir_ / "target.txt", target);
    ParallelCorpusOptions options;
    options.source_file = dir_ / "source.txt";
    options.target_file = dir_ / "target.txt";
    options.log = &log_;
    return options;
  }
  ParallelCorpus load(const ParallelCorpusOptions& options) { return ParallelCorpus::load(*vocabulary_, options); }

  std::filesystem::path dir_;
  std::unique_ptr<Vocabulary> vocabulary_;
  std::ostringstream log_;
};

TEST_F(ParallelCorpusTest, KeepsEveryGoodPairWithItsTokensAndLineNumber) {
  const std::vector<std::string> source = {"In the beginning.", "And God said, Let there be light.", "Amen."};
  const std::vector<std::string> target = {"En el principio.", "Y dijo Dios: Sea la luz.", "Amén."};
  const auto corpus = load(write_corpus(source, target));
  ASSERT_EQ(corpus.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(vocabulary_->decode(corpus.source(i)), source[i]);
    EXPECT_EQ(vocabulary_->decode(corpus.target(i)), target[i]);
    EXPECT_EQ(corpus.line_number(i), i + 1);
  }
  EXPECT_EQ(corpus.report().lines, 3u);
  EXPECT_EQ(corpus.report().kept, 3u);
  EXPECT_EQ(corpus.report().dropped_blank + corpus.report().dropped_too_long, 0u);
  EXPECT_EQ(log_.str(), corpus.options().source_file.string() + " + " + corpus.options().target_file.string() +
                            ": 3 lines: kept 3 pairs (" + std::to_string(corpus.report().source_tokens) + " + " +
                            std::to_string(corpus.report().target_tokens) +
                            " tokens), dropped 0 with a blank line, 0 over 256 tokens\n");
}

TEST_F(ParallelCorpusTest, DifferentLineCountsNameBothFiles) {
  const auto options = write_corpus({"one", "two", "three"}, {"uno", "dos"});
  const auto message = message_of([&] { load(options); });
  EXPECT_NE(message.find(options.source_file.string() + " has 3 lines"), std::string::npos) << message;
  EXPECT_NE(message.find(options.target_file.string() + " has 2"), std::string::npos) << message;
}

TEST_F(ParallelCorpusTest, InvalidUtf8NamesFileAndLine) {
  const auto options = write_corpus({"one", "two", "three"}, {"uno", "dos", "tr\xE9s"});
  const auto message = message_of([&] { load(options); });
  EXPECT_NE(message.find(options.target_file.string() + ":3: invalid UTF-8"), std::string::npos) << message;
}

TEST_F(ParallelCorpusTest, MissingFileIsNamed) {
  auto options = write_corpus({"one"}, {"uno"});
  options.target_file = dir_ / "nowhere.txt";
  EXPECT_NE(message_of([&] { load(options); }).find("nowhere.txt: cannot open"), std::string::npos);
}

TEST_F(ParallelCorpusTest, BlankLinesDropThePairAndAreNamedUpToTheLimit) {
  std::vector<std::string> source, target;
  for (int i = 1; i <= 20; ++i) {
    source.push_back(i % 2 == 0 ? "" : "Sentence " + std::to_string(i));
    target.push_back(i == 5 ? " \t " : "Frase " + std::to_string(i));
  }
  auto options = write_corpus(source, target);
  options.max_warnings = 3;
  const auto corpus = load(options);
  // Lines 2, 4, ..., 20 are empty in the source; line 5 is blank in the target.
  EXPECT_EQ(corpus.report().dropped_blank, 11u);
  EXPECT_EQ(corpus.report().kept, 9u);
  ASSERT_EQ(corpus.size(), 9u);
  EXPECT_EQ(corpus.line_number(0), 1u);
  EXPECT_EQ(corpus.line_number(2), 7u);
  const auto log = log_.str();
  EXPECT_NE(log.find(options.source_file.string() + ":2: blank line; pair dropped"), std::string::npos) << log;
  EXPECT_NE(log.find(options.source_file.string() + ":4: blank line"), std::string::npos) << log;
  EXPECT_NE(log.find(options.target_file.string() + ":5: blank line"), std::string::npos) << log;
  EXPECT_EQ(log.find(":6: "), std::string::npos) << "only the first 3 are named:\n" << log;
  EXPECT_NE(log.find("... and 8 more pairs with a blank line dropped"), std::string::npos) << log;
  EXPECT_NE(corpus.report().summary().find("dropped 11 with a blank line"), std::string::npos);
}

TEST_F(ParallelCorpusTest, OverLongPairsAreDroppedCountedAndNamed) {
  // Every word costs at least one token, so 40 words are over a limit of 30 on any vocabulary;
  // "Amen." is at most 5 tokens + EOS.
  const std::vector<std::string> source = {"Amen.", many_words(40), "Amen.", "Amen."};
  const std::vector<std::string> target = {"Amén.", "Amén.", "Amén.", many_words(40)};
  auto options = write_corpus(source, target);
  options.max_tokens = 30;
  const auto corpus = load(options);
  EXPECT_EQ(corpus.report().dropped_too_long, 2u);
  ASSERT_EQ(corpus.size(), 2u);
  EXPECT_EQ(corpus.line_number(0), 1u);
  EXPECT_EQ(corpus.line_number(1), 3u);
  const auto log = log_.str();
  EXPECT_NE(log.find(options.source_file.string() + ":2: "), std::string::npos) << log;
  EXPECT_NE(log.find(options.target_file.string() + ":4: "), std::string::npos) << log;
  EXPECT_NE(log.find("over the limit of 30; pair dropped"), std::string::npos) << log;
}

TEST_F(ParallelCorpusTest, LimitCountsTheAddedEndToken) {
  const auto tokens = vocabulary_->encode("And God saw the light.").size();
  auto options = write_corpus({"And God saw the light."}, {"And God saw the light."});
  options.max_tokens = tokens + 1;  // tokens + EOS fits exactly
  EXPECT_EQ(load(options).size(), 1u);
  options.max_tokens = tokens;
  EXPECT_EQ(load(options).size(), 0u);
}

TEST_F(ParallelCorpusTest, CacheIsUsedWhenFreshAndRebuiltWhenStaleOrDamaged) {
  const std::vector<std::string> source = {"In the beginning.", "And there was light."};
  const std::vector<std::string> target = {"En el principio.", "Y fué la luz."};
  auto options = write_corpus(source, target);
  options.cache_dir = dir_ / "cache";

  const auto first = load(options);
  EXPECT_FALSE(first.report().from_cache);
  const auto second = load(options);
  EXPECT_TRUE(second.report().from_cache);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(vocabulary_->decode(second.target(1)), target[1]);

  // The text changes: the cache is stale.
  write_lines(options.target_file, {"En el principio.", "Y hubo luz."});
  const auto changed = load(options);
  EXPECT_FALSE(changed.report().from_cache);
  EXPECT_EQ(vocabulary_->decode(changed.target(1)), "Y hubo luz.");
  EXPECT_NE(log_.str().find("made for other inputs; rebuilt"), std::string::npos) << log_.str();
  EXPECT_TRUE(load(options).report().from_cache);

  // The vocabulary changes: the cache is stale.
  const auto other_vocabulary = Vocabulary::load(train_fixture_vocabulary(dir_, 700, "other"));
  const auto other = ParallelCorpus::load(other_vocabulary, options);
  EXPECT_FALSE(other.report().from_cache);
  EXPECT_EQ(other_vocabulary.decode(other.source(0)), source[0]);

  // The cache file is damaged: one flipped byte, then a truncation.
  ASSERT_EQ(std::distance(std::filesystem::directory_iterator(options.cache_dir), {}), 1);
  const auto cache_file = std::filesystem::directory_iterator(options.cache_dir)->path();
  EXPECT_TRUE(ParallelCorpus::load(other_vocabulary, options).report().from_cache);
  std::string bytes = attn::testing::slurp(cache_file);
  bytes[bytes.size() / 2] ^= 0x40;
  write_file_atomic(cache_file, bytes);
  auto repaired = ParallelCorpus::load(other_vocabulary, options);
  EXPECT_FALSE(repaired.report().from_cache);
  EXPECT_EQ(other_vocabulary.decode(repaired.target(1)), "Y hubo luz.");
  EXPECT_NE(log_.str().find("damaged"), std::string::npos) << log_.str();

  write_file_atomic(cache_file, bytes.substr(0, 70));
  repaired = ParallelCorpus::load(other_vocabulary, options);
  EXPECT_FALSE(repaired.report().from_cache);
  EXPECT_EQ(other_vocabulary.decode(repaired.source(1)), source[1]);
  EXPECT_TRUE(ParallelCorpus::load(other_vocabulary, options).report().from_cache);
}

TEST_F(ParallelCorpusTest, CachedLoadDropsTheSamePairs) {
  auto options = write_corpus({"Amen.", "", many_words(40)}, {"Amén.", "Amén.", "Amén."});
  options.cache_dir = dir_ / "cache";
  options.max_tokens = 30;
  const auto fresh = load(options);
  const auto cached = load(options);
  ASSERT_TRUE(cached.report().from_cache);
  for (const auto* corpus : {&fresh, &cached}) {
    EXPECT_EQ(corpus->report().kept, 1u);
    EXPECT_EQ(corpus->report().dropped_blank, 1u);
    EXPECT_EQ(corpus->report().dropped_too_long, 1u);
  }
  EXPECT_EQ(count_of(log_.str(), options.source_file.string() + ":2: blank line"), 2) << log_.str();
}

// Found by fuzzing (fuzz/training_text_fuzz.cpp): reading back a cache whose side has no tokens at
// all passed memcpy a null pointer, undefined behaviour that UBSan reports.
TEST_F(ParallelCorpusTest, ACacheOfEmptyLinesReadsBack) {
  auto options = write_corpus({"", ""}, {"", ""});
  options.cache_dir = dir_ / "cache";
  const auto fresh = load(options);
  const auto cached = load(options);
  ASSERT_TRUE(cached.report().from_cache);
  EXPECT_EQ(cached.size(), 0u);
  EXPECT_EQ(cached.report().dropped_blank, 2u);
}

TEST_F(ParallelCorpusTest, ACacheThatCannotBeWrittenIsOnlyAWarning) {
  auto options = write_corpus({"Amen."}, {"Amén."});
  options.cache_dir = options.source_file / "cache";  // under a regular file: cannot be created
  const auto corpus = load(options);
  EXPECT_EQ(corpus.size(), 1u);
  EXPECT_FALSE(corpus.report().from_cache);
  EXPECT_NE(log_.str().find("warning: token cache not written"), std::string::npos) << log_.str();
}

// The quantile by nearest rank: of 10 sources of 1..10 words (longer in pieces, one after the other),
// the 0.8-quantile is the 8th shortest's length (8 of the 10 are no longer), 0.75 too (rank
// ceil(7.5) = 8), 0.1 the shortest's, 1 the longest's.
TEST_F(ParallelCorpusTest, SourceLengthQuantileIsTheNearestRank) {
  std::vector<std::string> source, target;
  for (int n = 10; n >= 1; --n) {  // given longest first: the order of the file does not matter
    source.push_back(many_words(n));
    target.push_back("uno");
  }
  const auto corpus = load(write_corpus(source, target));
  ASSERT_EQ(corpus.size(), 10u);
  std::vector<std::size_t> by_words(11);  // the length of the source of n words
  for (std::size_t i = 0; i < 10; ++i) by_words[10 - i] = corpus.source_length(i);
  for (int n = 2; n <= 10; ++n) ASSERT_LT(by_words[n - 1], by_words[n]) << n;
  EXPECT_EQ(corpus.source_length_quantile(0.8), by_words[8]);
  EXPECT_EQ(corpus.source_length_quantile(0.75), by_words[8]);
  EXPECT_EQ(corpus.source_length_quantile(0.1), by_words[1]);
  EXPECT_EQ(corpus.source_length_quantile(1.0), by_words[10]);
  EXPECT_THROW(corpus.source_length_quantile(0.0), Error);
  EXPECT_THROW(corpus.source_length_quantile(1.5), Error);
}

}  // namespace
}  // namespace attn::data
