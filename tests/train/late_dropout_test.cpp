// dropout_from_epoch ("late dropout"): no dropout in the epochs before it, dropout from it on.
#include <filesystem>
#include <fstream>
#include <map>
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

struct LateDropoutRun {
  std::vector<std::map<std::string, std::string>> checkpoints;  // after each update: tensor name -> bytes
  std::vector<int> epochs;                                      // train.jsonl's epoch after each update
  std::string log;
};

// The reverse task, 12 updates of ~6 batches an epoch, a checkpoint and a log record after each.
LateDropoutRun train_with(const testing::ReverseTask& task, const std::filesystem::path& run, float dropout,
                          int from_epoch) {
  TrainOptions o = testing::reverse_task_options(task, run);
  o.model.dropout = dropout;
  o.model.activation_dropout = dropout;
  o.dropout_from_epoch = from_epoch;
  o.max_steps = 12;
  o.save_every = 1;
  o.keep_checkpoints = 1000;
  o.log_every = 1;
  o.early_stopping = 0;
  o.threads = 2;
  std::ostringstream log;
  const TrainResult r = Trainer(o, log).run(false);
  EXPECT_EQ(r.stop_reason, "max_steps") << log.str();
  LateDropoutRun out;
  out.log = log.str();
  for (const auto& path : list_checkpoints(run / "checkpoints")) {
    const SafetensorsFile file(path);
    std::map<std::string, std::string> tensors;
    for (const auto& [name, entry] : file.entries())
      tensors[name] = std::string(file.data().substr(entry.begin, entry.end - entry.begin));
    out.checkpoints.push_back(std::move(tensors));
  }
  std::ifstream jsonl(run / "train.jsonl");
  for (std::string line; std::getline(jsonl, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.contains("epoch") && record.contains("step")) out.epochs.push_back(record.at("epoch").get<int>());
  }
  return out;
}

// A run with dropout 0.3 from epoch 2 makes, to the bit, the updates of a run without dropout
// while its batches come from epoch 1, and others from the first update that reaches epoch 2;
// dropout from epoch 1 (the default) differs from the first update on.
TEST(LateDropout, TrainsWithoutDropoutBeforeItsEpochAndWithItFromThere) {
  const auto dir = testing::fresh_temp_dir("late_dropout");
  const auto task = testing::make_reverse_task(dir, 300, 20);
  const LateDropoutRun plain = train_with(task, dir / "plain", 0, 1);
  const LateDropoutRun late = train_with(task, dir / "late", 0.3f, 2);
  const LateDropoutRun early = train_with(task, dir / "early", 0.3f, 1);
  ASSERT_EQ(plain.checkpoints.size(), 12u);
  ASSERT_EQ(late.checkpoints.size(), 12u);
  ASSERT_EQ(early.checkpoints.size(), 12u);
  ASSERT_EQ(plain.epochs.size(), 12u) << plain.log;
  EXPECT_EQ(late.epochs, plain.epochs);
  // The run must span both epochs, with more than one update in the first, for this to say anything.
  int first_of_epoch2 = -1;
  for (std::size_t t = 0; t < plain.epochs.size(); ++t)
    if (plain.epochs[t] == 2 && first_of_epoch2 < 0) first_of_epoch2 = static_cast<int>(t);
  ASSERT_GE(first_of_epoch2, 2) << "epochs per update: " << nlohmann::json(plain.epochs).dump();
  for (std::size_t t = 0; t < 12; ++t) {
    SCOPED_TRACE("after update " + std::to_string(t + 1) + ", epoch " + std::to_string(plain.epochs[t]));
    if (plain.epochs[t] < 2)
      EXPECT_TRUE(late.checkpoints[t] == plain.checkpoints[t]);
    else
      EXPECT_FALSE(late.checkpoints[t] == plain.checkpoints[t]);
  }
  EXPECT_FALSE(early.checkpoints[0] == plain.checkpoints[0]);
  EXPECT_NE(late.log.find("epoch 2: dropout 0.3 (activation dropout 0.3) from here on"), std::string::npos) << late.log;
  EXPECT_EQ(plain.log.find("from here on"), std::string::npos);
}

}  // namespace
}  // namespace attn
