#include "data/batcher.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "common/temp_dir.h"
#include "core/error.h"
#include "data_test_support.h"

namespace attn::data {
namespace {

using namespace attn::testing;

// A small fixed generator, so that the synthetic corpus is the same everywhere.
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : state_(seed) {}
  std::uint32_t below(std::uint32_t n) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>((state_ >> 33) % n);
  }

 private:
  std::uint64_t state_;
};

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Words the vocabulary keeps whole, so that a sentence of n of them is exactly n tokens.
std::vector<std::string> one_token_words(const Vocabulary& vocabulary, const std::string& text) {
  std::vector<std::string> words;
  for (const auto& word : words_of(text)) {
    if (vocabulary.encode(word).size() == 1) words.push_back(word);
  }
  return words;
}

// Pairs with the token lengths of English/Spanish Bible verses: 2 to 59 tokens, median 30 (the
// Bible: 5% under 15, median 30, 5% over 58), the target 0.8 to 1.26 times as long as the
// source, most near 1 (the Bible: 5% to 95% between 0.79 and 1.27).
void write_synthetic_corpus(const Vocabulary& vocabulary, const std::filesystem::path& source_file,
                            const std::filesystem::path& target_file, std::size_t pairs) {
  const auto english = one_token_words(vocabulary, slurp(fixture("genesis.en")));
  const auto spanish = one_token_words(vocabulary, slurp(fixture("genesis.es")));
  Lcg random(2017);
  std::vector<std::string> source, target;
  const auto sentence = [&](const std::vector<std::string>& words, std::uint32_t length) {
    std::string text = words[random.below(words.size())];
    for (std::uint32_t i = 1; i < length; ++i) text += " " + words[random.below(words.size())];
    return text;
  };
  for (std::size_t i = 0; i < pairs; ++i) {
    const std::uint32_t length = 2 + random.below(20) + random.below(20) + random.below(20);
    const std::uint32_t target_length =
        std::max<std::uint32_t>(1, length * (80 + random.below(24) + random.below(24)) / 100);
    source.push_back(sentence(english, length));
    target.push_back(sentence(spanish, target_length));
  }
  write_lines(source_file, source);
  write_lines(target_file, target);
}

class BatcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(fresh_temp_dir("batcher"));
    vocabulary_ = new Vocabulary(Vocabulary::load(train_fixture_vocabulary(*dir_)));
    write_synthetic_corpus(*vocabulary_, *dir_ / "synthetic.en", *dir_ / "synthetic.es", 3000);
    corpus_ = new ParallelCorpus(load_synthetic());
  }
  static void TearDownTestSuite() {
    delete corpus_;
    delete vocabulary_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static ParallelCorpus load_synthetic() {
    ParallelCorpusOptions options;
    options.source_file = *dir_ / "synthetic.en";
    options.target_file = *dir_ / "synthetic.es";
    return ParallelCorpus::load(*vocabulary_, options);
  }
  static const ParallelCorpus& corpus() { return *corpus_; }
  static const Vocabulary& vocabulary() { return *vocabulary_; }
  static const std::filesystem::path& dir() { return *dir_; }

 private:
  static inline std::filesystem::path* dir_ = nullptr;
  static inline Vocabulary* vocabulary_ = nullptr;
  static inline ParallelCorpus* corpus_ = nullptr;
};

// The line numbers of all batches of an epoch, in training order.
std::vector<std::size_t> lines_in_order(const Batcher& batcher, std::uint64_t epoch) {
  const auto batches = batcher.epoch(epoch);
  std::vector<std::size_t> lines;
  Batch batch;
  for (std::size_t k = 0; k < batches.size(); ++k) {
    batcher.fill(batches.pairs(k), batch);
    lines.insert(lines.end(), batch.line_numbers.begin(), batch.line_numbers.end());
  }
  return lines;
}

void expect_same_batch(const Batch& a, const Batch& b) {
  EXPECT_EQ(a.line_numbers, b.line_numbers);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.tgt_in, b.tgt_in);
  EXPECT_EQ(a.tgt_out, b.tgt_out);
  EXPECT_EQ(a.src_lengths, b.src_lengths);
  EXPECT_EQ(a.tgt_lengths, b.tgt_lengths);
  EXPECT_EQ(a.src_len, b.src_len);
  EXPECT_EQ(a.tgt_len, b.tgt_len);
}

TEST_F(BatcherTest, TokenConventionsOnAHandWrittenExample) {
  const std::vector<std::string> source = {"And God said.", "In the beginning God created the heaven.", "Amen."};
  const std::vector<std::string> target = {"Y dijo Dios.", "En el principio.", "Así sea, amén, amén."};
  write_lines(dir() / "three.en", source);
  write_lines(dir() / "three.es", target);
  ParallelCorpusOptions options;
  options.source_file = dir() / "three.en";
  options.target_file = dir() / "three.es";
  const auto corpus = ParallelCorpus::load(vocabulary(), options);
  Batcher batcher(corpus, {.batch_tokens = 1000, .seed = 3});
  const auto batches = batcher.epoch(0);
  ASSERT_EQ(batches.size(), 1u);
  Batch batch;
  batcher.fill(batches.pairs(0), batch);

  std::vector<std::vector<std::int32_t>> source_ids, target_ids;
  std::size_t longest_source = 0, longest_target = 0, source_tokens = 0, target_tokens = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    source_ids.push_back(vocabulary().encode(source[i]));
    target_ids.push_back(vocabulary().encode(target[i]));
    longest_source = std::max(longest_source, source_ids[i].size() + 1);
    longest_target = std::max(longest_target, target_ids[i].size() + 1);
    source_tokens += source_ids[i].size() + 1;
    target_tokens += target_ids[i].size() + 1;
  }
  ASSERT_EQ(batch.batch, 3);
  ASSERT_EQ(static_cast<std::size_t>(batch.src_len), longest_source);
  ASSERT_EQ(static_cast<std::size_t>(batch.tgt_len), longest_target);
  ASSERT_EQ(batch.src.size(), 3 * longest_source);
  ASSERT_EQ(batch.tgt_in.size(), 3 * longest_target);
  ASSERT_EQ(batch.tgt_out.size(), 3 * longest_target);
  EXPECT_EQ(static_cast<std::size_t>(batch.src_tokens), source_tokens);
  EXPECT_EQ(static_cast<std::size_t>(batch.tgt_tokens), target_tokens);

  std::vector<std::size_t> lines_seen;
  for (std::size_t row = 0; row < 3; ++row) {
    const std::size_t i = batch.line_numbers[row] - 1;  // rows come in length order, not file order
    lines_seen.push_back(i);
    // source + EOS(3), padded with 0
    auto expected_src = source_ids[i];
    expected_src.push_back(3);
    expected_src.resize(longest_source, 0);
    // BOS(2) + target, padded with 0
    std::vector<std::int32_t> expected_tgt_in = {2};
    expected_tgt_in.insert(expected_tgt_in.end(), target_ids[i].begin(), target_ids[i].end());
    expected_tgt_in.resize(longest_target, 0);
    // target + EOS(3), padded with 0
    auto expected_tgt_out = target_ids[i];
    expected_tgt_out.push_back(3);
    expected_tgt_out.resize(longest_target, 0);

    const auto row_of = [&](const std::vector<std::int32_t>& matrix, std::size_t width) {
      return std::vector<std::int32_t>(matrix.begin() + row * width, matrix.begin() + (row + 1) * width);
    };
    EXPECT_EQ(row_of(batch.src, longest_source), expected_src) << "row " << row;
    EXPECT_EQ(row_of(batch.tgt_in, longest_target), expected_tgt_in) << "row " << row;
    EXPECT_EQ(row_of(batch.tgt_out, longest_target), expected_tgt_out) << "row " << row;
    EXPECT_EQ(batch.src_lengths[row], static_cast<std::int32_t>(source_ids[i].size() + 1));
    EXPECT_EQ(batch.tgt_lengths[row], static_cast<std::int32_t>(target_ids[i].size() + 1));
  }
  std::sort(lines_seen.begin(), lines_seen.end());
  EXPECT_EQ(lines_seen, (std::vector<std::size_t>{0, 1, 2}));
}

TEST_F(BatcherTest, EveryPairOncePerEpochWithinBudgetAndLittlePadding) {
  ASSERT_EQ(corpus().size(), 3000u);
  for (const std::size_t budget : {1024, 4096}) {
    Batcher batcher(corpus(), {.batch_tokens = budget, .seed = 11});
    const std::size_t batches_per_epoch = batcher.epoch(0).size();
    for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
      const auto batches = batcher.epoch(epoch);
      EXPECT_EQ(batches.size(), batches_per_epoch);
      std::vector<std::size_t> lines;
      std::size_t slots = 0, pads = 0;
      Batch batch;
      for (std::size_t k = 0; k < batches.size(); ++k) {
        batcher.fill(batches.pairs(k), batch);
        ASSERT_GT(batch.batch, 0);
        const auto rows = static_cast<std::size_t>(batch.batch), S = static_cast<std::size_t>(batch.src_len);
        ASSERT_LE(rows * S, budget) << "source side over budget in batch " << k;
        ASSERT_LE(rows * static_cast<std::size_t>(batch.tgt_len), budget) << "target side over budget in batch " << k;
        lines.insert(lines.end(), batch.line_numbers.begin(), batch.line_numbers.end());
        // Real tokens are never 0 (encode never emits pad), so the zeros are exactly the padding.
        for (const auto& matrix : {batch.src, batch.tgt_out}) {
          slots += matrix.size();
          pads += static_cast<std::size_t>(std::count(matrix.begin(), matrix.end(), 0));
        }
        for (std::size_t row = 0; row < rows; ++row) {
          for (std::size_t t = 0; t < S; ++t) {
            const bool real = t < static_cast<std::size_t>(batch.src_lengths[row]);
            ASSERT_EQ(batch.src[row * S + t] != 0, real) << "row " << row << " column " << t;
          }
        }
      }
      std::sort(lines.begin(), lines.end());
      std::vector<std::size_t> every_line(3000);
      std::iota(every_line.begin(), every_line.end(), 1);
      ASSERT_EQ(lines, every_line) << "budget " << budget << " epoch " << epoch;

      const double padding = double(pads) / double(slots);
      const auto stats = batcher.statistics(batches);
      EXPECT_NEAR(stats.padding(), padding, 1e-12);
      EXPECT_LT(padding, 0.10) << "budget " << budget;
      if (epoch == 0) {
        std::printf("batch_tokens %zu: %zu batches, padding %.2f%% (source %.2f%%, target %.2f%%)\n", budget,
                    batches.size(), 100 * padding, 100 * stats.source_padding(), 100 * stats.target_padding());
      }
    }
  }
}

TEST_F(BatcherTest, SameSeedSameBatchesOtherSeedOrEpochOtherOrder) {
  const Batcher batcher(corpus(), {.batch_tokens = 2048, .seed = 42});
  const Batcher twin(corpus(), {.batch_tokens = 2048, .seed = 42});
  const Batcher other_seed(corpus(), {.batch_tokens = 2048, .seed = 43});
  const auto epoch_0 = lines_in_order(batcher, 0);
  EXPECT_EQ(lines_in_order(twin, 0), epoch_0);
  EXPECT_EQ(lines_in_order(batcher, 0), epoch_0);
  EXPECT_NE(lines_in_order(batcher, 1), epoch_0);
  EXPECT_NE(lines_in_order(other_seed, 0), epoch_0);
}

TEST_F(BatcherTest, BatchesDoNotDependOnThreadCount) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto single_threaded = load_synthetic();
  omp_set_num_threads(std::max(2, threads));
  const auto multi_threaded = load_synthetic();
  omp_set_num_threads(threads);
  const Batcher a(single_threaded, {.batch_tokens = 2048, .seed = 5});
  const Batcher b(multi_threaded, {.batch_tokens = 2048, .seed = 5});
  const auto batches_a = a.epoch(7), batches_b = b.epoch(7);
  ASSERT_EQ(batches_a.size(), batches_b.size());
  Batch batch_a, batch_b;
  for (std::size_t k = 0; k < batches_a.size(); ++k) {
    a.fill(batches_a.pairs(k), batch_a);
    b.fill(batches_b.pairs(k), batch_b);
    expect_same_batch(batch_a, batch_b);
  }
}

TEST_F(BatcherTest, ABatchCanBeRebuiltFromItsPosition) {
  // Resuming training at (epoch 4, batch 6) must give what an uninterrupted run saw there.
  const Batcher before(corpus(), {.batch_tokens = 2048, .seed = 9});
  const auto run = before.epoch(4);
  ASSERT_GT(run.size(), 6u);
  Batch seen;
  before.fill(run.pairs(6), seen);

  const Batcher after_restart(corpus(), {.batch_tokens = 2048, .seed = 9});
  Batch resumed;
  after_restart.fill(after_restart.epoch(4).pairs(6), resumed);
  expect_same_batch(resumed, seen);
}

TEST_F(BatcherTest, BuffersAreReusedAcrossBatches) {
  const Batcher batcher(corpus(), {.batch_tokens = 2048, .seed = 1});
  const auto batches = batcher.epoch(0);
  // Fill the largest batch first; after that no batch needs new memory.
  std::size_t largest = 0;
  for (std::size_t k = 0; k < batches.size(); ++k) {
    if (batches.pairs(k).size() > batches.pairs(largest).size()) largest = k;
  }
  Batch batch;
  batch.src.reserve(2048);
  batch.tgt_in.reserve(2048);
  batch.tgt_out.reserve(2048);
  batcher.fill(batches.pairs(largest), batch);
  const auto* src = batch.src.data();
  const auto* tgt_in = batch.tgt_in.data();
  const auto* lines = batch.line_numbers.data();
  for (std::size_t k = 0; k < batches.size(); ++k) {
    batcher.fill(batches.pairs(k), batch);
    EXPECT_EQ(batch.src.data(), src);
    EXPECT_EQ(batch.tgt_in.data(), tgt_in);
    EXPECT_EQ(batch.line_numbers.data(), lines);
  }
}

TEST_F(BatcherTest, APairLongerThanTheBudgetIsAnError) {
  std::size_t longest = 0;
  for (std::size_t i = 0; i < corpus().size(); ++i) {
    longest = std::max({longest, corpus().source(i).size() + 1, corpus().target(i).size() + 1});
  }
  EXPECT_NO_THROW(Batcher(corpus(), {.batch_tokens = longest}));
  const auto message = message_of([&] { Batcher(corpus(), {.batch_tokens = longest - 1}); });
  EXPECT_NE(message.find("batch_tokens " + std::to_string(longest - 1) + " cannot hold line "), std::string::npos)
      << message;
  EXPECT_NE(message.find("synthetic.en"), std::string::npos) << message;
}

}  // namespace
}  // namespace attn::data
