// bpe_dropout in training: each epoch cut anew (more pieces, so more batches, and another cut
// each epoch), only from dropout_from_epoch on, and a resumed run cuts its epoch again the same
// way, ending with the uninterrupted run's weights to the bit.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "model/safetensors.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

TrainOptions options_for(const testing::ReverseTask& task, const std::filesystem::path& run, double bpe_dropout,
                         int from_epoch, std::int64_t max_steps) {
  TrainOptions o = testing::reverse_task_options(task, run);
  o.bpe_dropout = bpe_dropout;
  o.dropout_from_epoch = from_epoch;
  o.max_steps = max_steps;
  o.save_every = 1;
  o.keep_checkpoints = 1000;
  o.log_every = 1;
  o.early_stopping = 0;
  o.threads = 2;
  return o;
}

std::vector<int> epochs_of(const std::filesystem::path& run) {  // train.jsonl's epoch after each update
  std::vector<int> epochs;
  std::ifstream jsonl(run / "train.jsonl");
  for (std::string line; std::getline(jsonl, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.contains("epoch") && record.contains("step")) epochs.push_back(record.at("epoch").get<int>());
  }
  return epochs;
}

int updates_in(const std::vector<int>& epochs, int epoch) {
  return static_cast<int>(std::count(epochs.begin(), epochs.end(), epoch));
}

std::string tensors_of(const std::filesystem::path& checkpoint) {
  const SafetensorsFile file(checkpoint);
  std::string bytes;
  for (const auto& [name, entry] : file.entries())
    bytes.append(name).append(file.data().substr(entry.begin, entry.end - entry.begin));
  return bytes;
}

TEST(BpeDropoutTraining, EachEpochIsCutAnewAndAResumedRunCutsItTheSameWay) {
  const auto dir = testing::fresh_temp_dir("bpe_dropout_training");
  const auto task = testing::make_reverse_task(dir, 300, 20);
  constexpr std::int64_t kSteps = 30;

  std::ostringstream plain_log, straight_log, late_log;
  ASSERT_EQ(Trainer(options_for(task, dir / "plain", 0, 1, kSteps), plain_log).run(false).stop_reason, "max_steps");
  ASSERT_EQ(Trainer(options_for(task, dir / "straight", 0.4, 1, kSteps), straight_log).run(false).stop_reason,
            "max_steps");
  ASSERT_EQ(Trainer(options_for(task, dir / "late", 0.4, 2, kSteps), late_log).run(false).stop_reason, "max_steps");
  const auto plain = epochs_of(dir / "plain"), straight = epochs_of(dir / "straight"), late = epochs_of(dir / "late");
  ASSERT_EQ(plain.size(), static_cast<std::size_t>(kSteps)) << plain_log.str();

  // More pieces, more batches of the same token budget: the first epoch lasts longer with BPE-dropout,
  // and exactly as long when it starts in the second epoch.
  ASSERT_GE(updates_in(plain, 2), 2) << nlohmann::json(plain).dump();
  EXPECT_GT(updates_in(straight, 1), updates_in(plain, 1)) << nlohmann::json(straight).dump();
  EXPECT_EQ(updates_in(late, 1), updates_in(plain, 1));
  EXPECT_GT(updates_in(late, 2), updates_in(plain, 2));
  // Each epoch is cut anew: the log gives its token count, which differs between epochs and is above
  // the usual count.
  const std::regex cut(R"(epoch (\d+): BPE-dropout 0.4: (\d+) \+ (\d+) tokens \(usually (\d+) \+ (\d+)\))");
  std::vector<long> sources;
  const std::string text = straight_log.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), cut); it != std::sregex_iterator(); ++it) {
    EXPECT_EQ(std::stoi((*it)[1]), static_cast<int>(sources.size()) + 1) << text;
    EXPECT_GT(std::stol((*it)[2]), std::stol((*it)[4]));
    EXPECT_GT(std::stol((*it)[3]), std::stol((*it)[5]));
    sources.push_back(std::stol((*it)[2]));
  }
  ASSERT_GE(sources.size(), 2u) << text;
  EXPECT_NE(sources[0], sources[1]);
  EXPECT_EQ(plain_log.str().find("BPE-dropout 0"), std::string::npos);
  EXPECT_NE(late_log.str().find("epoch 2: dropout 0 (activation dropout 0, BPE-dropout 0.4) from here on"),
            std::string::npos)
      << late_log.str();
  // The first epoch of the late run trains on the usual pieces: its weights are the plain run's.
  EXPECT_TRUE(tensors_of(checkpoint_path(dir / "late" / "checkpoints", 1)) ==
              tensors_of(checkpoint_path(dir / "plain" / "checkpoints", 1)));

  // Stopped inside its second epoch, then resumed: the same weights as the run that went straight on.
  int stop = 0;
  for (std::size_t t = 1; t < straight.size(); ++t)
    if (straight[t - 1] == 2 && straight[t] == 2) stop = static_cast<int>(t);  // after update t, mid-epoch 2
  ASSERT_GT(stop, 0) << nlohmann::json(straight).dump();
  std::ostringstream first_log, resumed_log;
  ASSERT_EQ(Trainer(options_for(task, dir / "resumed", 0.4, 1, stop), first_log).run(false).stop_reason, "max_steps");
  ASSERT_EQ(Trainer(options_for(task, dir / "resumed", 0.4, 1, kSteps), resumed_log).run(true).stop_reason, "max_steps")
      << resumed_log.str();
  EXPECT_TRUE(tensors_of(checkpoint_path(dir / "resumed" / "checkpoints", kSteps)) ==
              tensors_of(checkpoint_path(dir / "straight" / "checkpoints", kSteps)))
      << "the resumed run's weights differ from the straight run's";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn
