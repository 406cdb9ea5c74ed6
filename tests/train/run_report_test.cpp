// The run report's training table counts to where the run stopped: train.jsonl has a progress record
// only every log_every updates, so a run stopped between two (by its time budget, say) was reported
// at its last record (the demo's report said "16900" for a run of 16948 updates).
#include "train/run_report.h"

#include <sstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/clock_text.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

TEST(RunReport, CountsToTheUpdateTheRunStoppedAt) {
  const auto dir = testing::fresh_temp_dir("run_report_end");
  const auto task = testing::make_reverse_task(dir, 400, 20);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  o.max_steps = 10;
  o.log_every = 4;  // records at updates 4 and 8
  o.warmup_steps = 5;
  o.threads = 1;
  std::ostringstream log;
  const TrainResult result = Trainer(o, log).run(false, false);
  ASSERT_EQ(result.progress.step, 10) << log.str();

  const TrainingLog records = read_training_log(dir / "run" / "train.jsonl");
  ASSERT_EQ(records.train.size(), 2u);
  ASSERT_EQ(records.train.back().step, 8);
  ASSERT_LT(records.train.back().target_tokens, result.progress.target_tokens);

  RunReportOptions r;
  r.run = dir / "report";
  r.train_dir = dir / "run";
  const std::string md = build_run_report(r, "today").markdown;
  EXPECT_NE(md.find("| updates | 10 (" + std::to_string(result.progress.epoch + 1) + " epochs) |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| target tokens seen | " + std::to_string(result.progress.target_tokens) + " |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| training time | " + clock_text(result.progress.elapsed_seconds) + " |"), std::string::npos)
      << md;
}

}  // namespace
}  // namespace attn
