// The whole training path learns a task whose answer is known: reversing the word order of
// sentences drawn from a small vocabulary. Judged by exact match of greedy translations of
// held-out sentences, not by anything the trainer reports.
#include <gtest/gtest.h>

#include <sstream>

#include "common/temp_dir.h"
#include "decode/model_directory.h"
#include "decode/translator.h"
#include "kernels/cpu/ops.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

// Trains with `adjust` applied to the task's options; expects >= 99% exact match.
template <typename Adjust>
void learn_to_reverse(const std::string& name, std::int64_t steps, Adjust adjust) {
  const auto dir = testing::fresh_temp_dir(name);
  const auto task = testing::make_reverse_task(dir);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  o.max_steps = steps;
  adjust(o);
  std::ostringstream log;
  const TrainResult r = Trainer(o, log).run(false);
  EXPECT_EQ(r.stop_reason, "max_steps") << log.str();
  // The dev loss fell: the log's validations (every 500 steps) improved on the first.
  EXPECT_LT(r.progress.best_valid_loss, 0.5) << log.str();

  const LoadedModel m = load_model_directory(dir / "run" / "model");
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
  // Measured: 1500 steps at lr scale 0.2 gave 184-198 of 200 depending on the order of float
  // sums; 2500 at 0.5 gives 200 and so do 3000, so the test sits on the plateau, not its edge.
  learn_to_reverse("learn_reverse", 2500, [](TrainOptions& o) { o.lr_scale = 0.5; });
}

TEST(Training, LearnsToReverseSentencesInMixedPrecision) {
  if (!cpu::bf16_matmul_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  // Wide enough (128) that the layers' products run in bf16 rather than falling back to fp32.
  // On the plateau like the float32 test: 1500 steps at lr scale 0.2 or 0.5 gave 165-200 of 200
  // depending on the seed (attention's products in bf16, as autocast: 165-200; with only Q, K, V
  // rounded: 182-200); 2500 at 0.5 reaches >= 198 on the seeds that did worst.
  learn_to_reverse("learn_reverse_bf16", 2500, [](TrainOptions& o) {
    o.precision = "bf16";
    o.lr_scale = 0.5;
    o.model.d_model = o.model.d_ff = 128;
    o.model.heads = 4;
    o.model.d_k = o.model.d_v = 32;
  });
}

}  // namespace
}  // namespace attn
