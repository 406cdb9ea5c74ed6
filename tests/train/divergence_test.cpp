// A run whose learning rate is far too high stops with a message saying what to change, instead
// of training on (the loss at 10^6, perplexity inf) and writing checkpoints; nothing it writes is
// not finite.
#include <cmath>
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "model/safetensors.h"
#include "train/checkpoint.h"
#include "train_test_support.h"

namespace attn {
namespace {

void expect_finite_checkpoints(const std::filesystem::path& run) {
  for (const auto& path : list_checkpoints(run / "checkpoints")) {
    const SafetensorsFile f(path);
    for (const auto& [name, entry] : f.entries()) {
      const std::string_view bytes = f.data().substr(entry.begin, entry.end - entry.begin);
      for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        float x;
        std::memcpy(&x, bytes.data() + i, 4);
        ASSERT_TRUE(std::isfinite(x)) << path << " " << name;
      }
    }
  }
}

TEST(Divergence, ALearningRateFarTooHighStopsTheRunSayingWhatToChange) {
  const auto dir = testing::fresh_temp_dir("divergence");
  const auto t = testing::make_reverse_task(dir, 1000, 20);
  const std::string common = "train --preset tiny --train-source " + t.train_src.string() + " --train-target " +
                             t.train_tgt.string() + " --vocabulary " + t.vocabulary.string() +
                             " --d-model 64 --d-ff 128 --d-k 16 --d-v 16 --batch-tokens 512 --max-steps 300"
                             " --save-every 1 --save-every-minutes 0 --log-every 1 --threads 1";
  // lr_scale 100: every value stays finite while the loss climbs past any learning model's.
  // lr_scale 1e30: the weights overflow after one update and the next gradient is NaN.
  for (const std::string lr : {"100", "1e30"}) {
    const auto run = dir / ("lr" + lr);
    const auto r = testing::run_attn(common + " --warmup-steps 10 --lr-scale " + lr + " --run-dir " + run.string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("attn: error: training diverged at update "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(lr == "100" ? "the loss per target token is" : "the gradient is not finite"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("lower lr_scale, raise warmup_steps, or set clip_norm"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("training stopped"), std::string::npos) << "no final checkpoint: " << r.output;
    EXPECT_FALSE(std::filesystem::exists(run / "model")) << "no final model of a diverged run";
    const auto saved = list_checkpoints(run / "checkpoints");
    ASSERT_FALSE(saved.empty());
    EXPECT_LT(inspect_checkpoint(saved.back()).progress.step, 300);
    expect_finite_checkpoints(run);
  }
}

// An empty or all-blank dev set is refused at the start (it made every validation a "new best"
// with perplexity 0).
TEST(DevSet, EmptyOrBlankDevSetIsRefusedClearly) {
  const auto dir = testing::fresh_temp_dir("empty_dev");
  const auto t = testing::make_reverse_task(dir, 300, 5);
  for (const std::string text : {"", "\n  \n\t\n"}) {
    {
      std::ofstream(dir / "dev.src") << text;
      std::ofstream(dir / "dev.tgt") << text;
    }
    const auto run = dir / ("run" + std::to_string(text.size()));
    const auto r = testing::run_attn("train --preset tiny --train-source " + t.train_src.string() + " --train-target " +
                                     t.train_tgt.string() + " --vocabulary " + t.vocabulary.string() +
                                     " --valid-source " + (dir / "dev.src").string() + " --valid-target " +
                                     (dir / "dev.tgt").string() + " --max-steps 5 --run-dir " + run.string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("has no usable sentence pair"), std::string::npos) << r.output;
    EXPECT_TRUE(list_checkpoints(run / "checkpoints").empty());
  }
}

}  // namespace
}  // namespace attn
