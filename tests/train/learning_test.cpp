// The whole training path learns a task whose answer is known: reversing the word order of
// sentences drawn from a small vocabulary. Judged by exact match of greedy translations of
// held-out sentences, not by anything the trainer reports.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "decode/model_directory.h"
#include "decode/batch_translator.h"
#include "inspect/attention_record.h"
#include "kernels/cpu/ops.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

// A model that reverses word order must, to do so, attend from target word j of n to source
// word n-1-j: the reversal is a gold alignment known without looking at the model. Checks the
// exported attention and the alignments the command line reads off it against that.
void check_attention_of_a_reverser(const std::filesystem::path& dir, const LoadedModel& m,
                                   const testing::ReverseTask& task) {
  const auto model_dir = dir / "averaged";
  save_model_directory(model_dir, *m.model, *m.vocabulary);
  std::string gold_lines;
  for (const auto& line : task.dev_sources) {
    const std::size_t n = testing::split_words(line).size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i) gold_lines += ' ';
      gold_lines += std::to_string(i) + '-' + std::to_string(n - 1 - i);
    }
    gold_lines += '\n';
  }
  std::ofstream(dir / "dev.gold") << gold_lines;

  // BatchTranslation with attention export and alignments appended: "text ||| links".
  testing::RunResult run =
      testing::run_attn("translate -q -m " + model_dir.string() + " -i " + task.dev_src.string() + " -o " +
                        (dir / "dev.out").string() + " --attention " + (dir / "dev.att").string() + " --alignment");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream translated(dir / "dev.out");
  const auto records = inspect::read_attention_records((dir / "dev.att").string());
  ASSERT_EQ(records.size(), task.dev_sources.size());
  const int layers = m.model->config().decoder_layers, heads = m.model->config().heads;
  int reversed = 0, links = 0, right_links = 0;
  std::string line;
  for (std::size_t i = 0; std::getline(translated, line); ++i) {
    const auto bar = line.find(" ||| ");
    ASSERT_NE(bar, std::string::npos) << line;
    reversed += line.substr(0, bar) == task.dev_targets[i];
    const std::size_t n = testing::split_words(task.dev_sources[i]).size();
    for (const std::string& link : testing::split_words(line.substr(bar + 5))) {
      const auto dash = link.find('-');
      ASSERT_NE(dash, std::string::npos) << line;
      ++links;
      right_links += std::stoul(link.substr(0, dash)) + std::stoul(link.substr(dash + 1)) == n - 1;
    }
    const inspect::AttentionRecord& r = records[i];
    EXPECT_EQ(r.line, static_cast<std::int64_t>(i) + 1);
    EXPECT_EQ(r.source, task.dev_sources[i]);
    EXPECT_EQ(r.target, line.substr(0, bar));
    ASSERT_EQ(r.attention.size(), static_cast<std::size_t>(layers * heads));  // cross, every layer and head
    for (const auto& a : r.attention) {
      ASSERT_EQ(a.rows, static_cast<int>(r.target_pieces.size()));
      ASSERT_EQ(a.cols, static_cast<int>(r.source_pieces.size()));
    }
  }
  EXPECT_GE(reversed, 198);
  // The default (mean of the last layer's heads, argmax: one link per target word) finds
  // the reversal (measured: 97-98% of links).
  EXPECT_GE(right_links, 0.9 * links) << "of " << links << " links follow the reversal";

  // Forced decoding of the reference pairs: the best layer and head against the reversal gold.
  run = testing::run_attn("align -m " + model_dir.string() + " --source " + task.dev_src.string() + " --target " +
                          task.dev_tgt.string() + " --gold " + (dir / "dev.gold").string() + " --sweep --json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  double best = 100;  // percent
  for (const auto& row : nlohmann::json::parse(run.output)) best = std::min(best, row.at("aer").get<double>());
  std::cout << "reverser: " << reversed << "/200 reversed (needed: 198), " << right_links << "/" << links
            << " links of the default alignment follow the reversal (needed: 90%), best layer/head AER " << best
            << "% (needed: below 5%)\n";
  EXPECT_LT(best, 5.0);  // percent
}

// Trains with `adjust` applied to the task's options, averages the last 5 checkpoints (written
// every steps/25; the paper averages its last 5) and expects >= 99% exact match. The final
// weights alone move with the order of float sums: the bf16 run built at -O2 instead of -O3
// reversed 195 of 200, and other seeds as few as 165.
template <typename Adjust>
void learn_to_reverse(const std::string& name, std::int64_t steps, Adjust adjust, bool check_attention = false) {
  const auto dir = testing::fresh_temp_dir(name);
  const auto task = testing::make_reverse_task(dir);
  TrainOptions o = testing::reverse_task_options(task, dir / "run");
  o.max_steps = steps;
  o.save_every = static_cast<int>(steps / 25);
  o.save_every_minutes = 0;
  o.keep_checkpoints = 5;
  // The order of float sums, and so the weights, depends on the thread count: pinned, so that the
  // result does not move with the machine's number of cores (it still may with its instruction set).
  o.threads = 2;
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
  BatchTranslatorOptions greedy;
  greedy.search.beam_size = 1;
  BatchTranslator translator(*m.model, *m.vocabulary, greedy);
  const auto out = translator.translate(task.dev_sources);
  int exact = 0;
  for (std::size_t i = 0; i < out.size(); ++i) exact += out[i].text == task.dev_targets[i];
  std::cout << name << ": " << exact << "/" << out.size() << " reversed exactly (needed: 198), best dev loss "
            << r.progress.best_valid_loss << " (needed: below 0.5)\n";
  EXPECT_GE(exact, 198) << "of " << out.size() << " held-out sentences reversed exactly; e.g. '" << task.dev_sources[0]
                        << "' -> '" << out[0].text << "'";
  if (check_attention) check_attention_of_a_reverser(dir, m, task);
}

TEST(Training, LearnsToReverseSentencesToNinetyNinePercentExactMatch) {
  // Measured without averaging: 1500 steps gave 184-198 of 200 depending on the order of float
  // sums. With the last 5 checkpoints averaged, 1500 steps at lr scale 0.5 reach >= 198 on every
  // seed tried (1 and 3 here, 1-4 for the bf16 twin, whose unaveraged runs gave 165-200).
  learn_to_reverse(
      "learn_reverse", 1500, [](TrainOptions& o) { o.lr_scale = 0.5; }, /*check_attention=*/true);
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
