// train.jsonl as typed records (train/train_log.h): what a real run writes reads back field for
// field, the file's keys are today's (checked with plain JSON, apart from the structs), and the
// records handed to a listener are the lines written.
#include "train/train_log.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  return keys;
}

TEST(TrainLog, ARealRunsRecordsReadBackTypedAndKeepTheirKeys) {
  const auto dir = testing::fresh_temp_dir("train_log_typed");
  const auto task = testing::make_reverse_task(dir, 400, 20);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  o.max_steps = 10;
  o.log_every = 4;    // progress records after updates 4 and 8
  o.valid_every = 5;  // validations after updates 5 and 10
  o.valid_translate = 3;
  o.warmup_steps = 5;
  o.threads = 1;
  std::ostringstream log;
  Trainer trainer(o, log);
  std::vector<std::string> heard;
  std::vector<std::int64_t> heard_steps;
  trainer.on_record([&](const TrainLogRecord& record, const std::string& line) {
    heard.push_back(line);
    heard_steps.push_back(std::visit([](const auto& r) { return r.step; }, record));
  });
  const TrainResult result = trainer.run(false, false);
  ASSERT_EQ(result.progress.step, 10) << log.str();

  // The file, read as plain JSON.
  std::vector<std::string> lines;
  std::vector<nlohmann::json> plain;
  std::ifstream in(dir / "run" / "train.jsonl");
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    plain.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_EQ(heard, lines) << "the listener hears each line as written";
  EXPECT_EQ(heard_steps, (std::vector<std::int64_t>{4, 5, 8, 10}));
  const std::set<std::string> train_keys{
      "type", "step", "epoch", "loss", "ppl", "lr", "tokens_per_second", "target_tokens", "elapsed_seconds"};
  const std::set<std::string> valid_keys{"type",    "step", "loss", "cross_entropy", "ppl",  "tokens",
                                         "seconds", "bleu", "chrf", "translated",    "best", "elapsed_seconds"};
  for (const auto& j : plain) EXPECT_EQ(keys_of(j), j.at("type") == "train" ? train_keys : valid_keys) << j.dump();
  EXPECT_EQ(plain[0].at("type"), "train");
  EXPECT_EQ(plain[1].at("type"), "valid");
  EXPECT_EQ(plain[1].at("best"), true);  // the first validation is the best so far
  EXPECT_EQ(plain[1].at("translated"), 3);

  const TrainingLog typed = read_training_log(dir / "run" / "train.jsonl");
  EXPECT_FALSE(typed.torn_last_line);
  ASSERT_EQ(typed.train.size(), 2u);
  ASSERT_EQ(typed.valid.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const TrainRecord& t = typed.train[i];
    const nlohmann::json& j = plain[i == 0 ? 0 : 2];
    EXPECT_EQ(t.step, j.at("step").get<std::int64_t>());
    EXPECT_EQ(t.epoch, j.at("epoch").get<std::int64_t>());
    EXPECT_EQ(t.loss, j.at("loss").get<double>());
    EXPECT_EQ(t.lr, j.at("lr").get<double>());
    EXPECT_EQ(t.target_tokens, j.at("target_tokens").get<std::int64_t>());
    EXPECT_EQ(t.elapsed_seconds, j.at("elapsed_seconds").get<double>());
    EXPECT_FALSE(t.ranks || t.allreduce_seconds || t.lr_decay_end);  // one process, no decay to a clock
    const ValidRecord& v = typed.valid[i];
    const nlohmann::json& k = plain[i == 0 ? 1 : 3];
    EXPECT_EQ(v.step, k.at("step").get<std::int64_t>());
    EXPECT_EQ(v.cross_entropy, k.at("cross_entropy").get<double>());
    EXPECT_EQ(v.best, k.at("best").get<bool>());
    ASSERT_TRUE(v.bleu && v.chrf && v.translated);
    EXPECT_EQ(*v.bleu, k.at("bleu").get<double>());
    EXPECT_FALSE(v.ema_decay);
    EXPECT_NEAR(v.ppl, std::exp(v.cross_entropy), 1e-9 * v.ppl);  // an invariant of the record itself
  }
  EXPECT_EQ(typed.train[0].step, 4);
  EXPECT_EQ(typed.train[1].step, 8);
  EXPECT_EQ(typed.valid[1].step, 10);
  // Written again, each record is its line to the byte: no key lost, added or reformatted.
  EXPECT_EQ(record_json(typed.train[0]).dump(), lines[0]);
  EXPECT_EQ(record_json(typed.valid[0]).dump(), lines[1]);
  EXPECT_EQ(record_json(typed.train[1]).dump(), lines[2]);
  EXPECT_EQ(record_json(typed.valid[1]).dump(), lines[3]);
}

// The optional fields appear exactly when set, under today's keys.
TEST(TrainLog, OptionalFieldsAreWrittenOnlyWhenSet) {
  TrainRecord t;
  t.step = 7;
  EXPECT_FALSE(record_json(t).contains("ranks"));
  t.lr_decay_end = 240;
  t.ranks = 2;
  t.allreduce_seconds = 0.5;
  const auto j = nlohmann::json::parse(record_json(t).dump());
  EXPECT_EQ(j.at("type"), "train");
  EXPECT_EQ(j.at("lr_decay_end"), 240);
  EXPECT_EQ(j.at("ranks"), 2);
  EXPECT_EQ(j.at("allreduce_seconds"), 0.5);
  const auto back = j.get<TrainRecord>();
  EXPECT_EQ(back.lr_decay_end, 240);
  EXPECT_EQ(back.ranks, 2);
  ValidRecord v;
  v.ema_decay = 0.999;
  const auto k = record_json(v);
  EXPECT_EQ(k.at("type"), "valid");
  EXPECT_EQ(k.at("ema_decay"), 0.999);
  EXPECT_FALSE(k.contains("bleu") || k.contains("chrf") || k.contains("translated"));
}

}  // namespace
}  // namespace attn
