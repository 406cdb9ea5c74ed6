// The whole training path learns a task whose answer is known: reversing the word order of
// sentences drawn from a small vocabulary. Judged by exact match of greedy translations of
// held-out sentences, not by anything the trainer reports.
#include <gtest/gtest.h>

#include <sstream>

#include "common/temp_dir.h"
#include "decode/model_directory.h"
#include "decode/translator.h"
#include "kernels/cpu/ops.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

// Trains with `adjust` applied to the task's options, averages the last 5 checkpoints (written
// every steps/25; the paper averages its last 5) and expects >= 99% exact match. The final
// weights alone move with the order of float sums: the bf16 run built at -O2 instead of -O3
// reversed 195 of 200, and other seeds as few as 165.
template <typename Adjust>
void learn_to_reverse(const std::string& name, std::int64_t steps, Adjust adjust) {
  const auto dir = testing::fresh_temp_dir(name);
  const auto task = testing::make_reverse_task(dir);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  o.max_steps = steps;
  o.save_every = static_cast<int>(steps / 25);
  o.save_every_minutes = 0;
  o.keep_checkpoints = 5;
  adjust(o);
  std::ostringstream log;
  const TrainResult r = Trainer(o, log).run(false);
  EXPECT_EQ(r.stop_reason, "max_steps") << log.str();
  // The dev loss fell: the log's validations (every 500 steps) improved on the first.
  EXPECT_LT(r.progress.best_valid_loss, 0.5) << log.str();

  const LoadedModel m = load_model_directory(dir / "run" / "model");
  const auto checkpoints = list_checkpoints(dir / "run" / "checkpoints");
  ASSERT_EQ(checkpoints.size(), 5u);
  m.model->set_parameters(average_weights(checkpoints, m.model->config()));
  TranslateOptions greedy;
  greedy.search.beam_size = 1;
  Translator translator(*m.model, *m.vocabulary, greedy);
  const auto out = translator.translate(task.dev_sources);
  int exact = 0;
  for (std::size_t i = 0; i < out.size(); ++i) exact += out[i].text == task.dev_targets[i];
  EXPECT_GE(exact, 198) << "of " << out.size() << " held-out sentences reversed exactly; e.g. '"
                        << task.dev_sources[0] << "' -> '" << out[0].text << "'";
}

TEST(Training, LearnsToReverseSentencesToNinetyNinePercentExactMatch) {
  // Measured without averaging: 1500 steps gave 184-198 of 200 depending on the order of float
  // sums. With the last 5 checkpoints averaged, 1500 steps at lr scale 0.5 reach >= 198 on every
  // seed tried (1 and 3 here, 1-4 for the bf16 twin, whose unaveraged runs gave 165-200).
  learn_to_reverse("learn_reverse", 1500, [](TrainOptions& o) { o.lr_scale = 0.5; });
}

TEST(Training, LearnsToReverseSentencesInMixedPrecision) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  // Wide enough (128) that the layers' products run in bf16 rather than falling back to fp32.
  learn_to_reverse("learn_reverse_bf16", 1500, [](TrainOptions& o) {
    o.precision = "bf16";
    o.lr_scale = 0.5;
    o.model.d_model = o.model.d_ff = 128;
    o.model.heads = 4;
    o.model.d_k = o.model.d_v = 32;
  });
}

}  // namespace
}  // namespace attn
