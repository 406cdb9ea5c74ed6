// attn train records with the model what it was trained on: config.json's sentence_tokens, the
// source length in pieces that 4 in 5 training sentences do not exceed (docs/model-format.md), which
// document translation reads as the longest sentence to hand the model whole.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "core/text_file.h"
#include "data/vocabulary.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

TEST(SentenceTokens, TheModelFolderRecordsTheEightiethPercentileOfTheTrainingSources) {
  const auto dir = testing::fresh_temp_dir("train_sentence_tokens");
  const auto task = testing::make_reverse_task(dir, 400, 20);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  o.max_steps = 2;
  o.threads = 1;
  std::ostringstream log;
  Trainer trainer(o, log);
  ASSERT_EQ(trainer.run(false, false).progress.step, 2) << log.str();

  // The expected value, worked out here: every training source in pieces, sorted; the smallest
  // length that at least 80% of them do not exceed (rank ceil(0.8 n), counted from 1).
  const data::Vocabulary vocabulary = data::Vocabulary::load(task.vocabulary);
  std::vector<std::size_t> lengths;
  std::ifstream in(task.train_src);
  for (std::string line; std::getline(in, line);) lengths.push_back(vocabulary.encode(line).size());
  ASSERT_EQ(lengths.size(), 400u);
  std::sort(lengths.begin(), lengths.end());
  const std::size_t expected = lengths[static_cast<std::size_t>(std::ceil(0.8 * 400)) - 1];
  ASSERT_LT(lengths.front(), lengths.back()) << "the task's sentences differ in length";

  const auto config = nlohmann::json::parse(read_file_bytes(dir / "run" / "model" / "config.json"));
  EXPECT_EQ(config.at("sentence_tokens"), expected);
}

}  // namespace
}  // namespace attn
