// Checkpoints: round trip, refusal of truncated or corrupted files, averaging, and the paper's
// learning-rate schedule at hand-computed steps.
#include "train/checkpoint.h"

#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "common/temp_dir.h"
#include "common/toy_batch.h"
#include "core/error.h"
#include "train/learning_rate.h"

namespace attn {
namespace {

void expect_error(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LearningRate, FollowsThePaperAtHandComputedSteps) {
  const LearningRateSchedule lr{512, 4000, 1.0};
  // 512^-0.5 = 0.044194174; 4000^-1.5 = 3.9528471e-6; 4000^-0.5 = 0.015811388
  EXPECT_NEAR(lr.rate(1), 0.044194174 * 3.9528471e-6, 1e-12);
  EXPECT_NEAR(lr.rate(2000), 0.044194174 * 2000 * 3.9528471e-6, 1e-10);
  EXPECT_NEAR(lr.rate(4000), 0.044194174 * 0.015811388, 1e-9);  // the peak: 6.988e-4
  EXPECT_NEAR(lr.rate(16000), 0.044194174 / 126.49111, 1e-9);   // half the peak
  const LearningRateSchedule scaled{256, 100, 2.0};
  EXPECT_NEAR(scaled.rate(400), 2.0 / 16 / 20, 1e-12);
  EXPECT_EQ(scaled.rate(400, DecayLine{}), scaled.rate(400));  // a line without an end is no line
}

// Linear decay: the paper's rise to the same peak, then a straight line to 0 at the last update.
TEST(LearningRate, LinearDecayFallsFromThePeakToZeroAtTheEnd) {
  const LearningRateSchedule lr{256, 100, 2.0};
  const DecayLine line{1100};
  // peak = 2 · 256^-0.5 · 100^-0.5 = 2 / 16 / 10 = 0.0125
  EXPECT_NEAR(lr.rate(50, line), 0.0125 / 2, 1e-12);   // the rise is the paper's: step · warmup^-1.5
  EXPECT_NEAR(lr.rate(100, line), 0.0125, 1e-12);      // the peak at the end of warmup
  EXPECT_NEAR(lr.rate(600, line), 0.0125 / 2, 1e-12);  // halfway from 100 to 1100
  EXPECT_NEAR(lr.rate(1000, line), 0.0125 / 10, 1e-12);
  EXPECT_EQ(lr.rate(1100, line), 0.0);
  EXPECT_EQ(lr.rate(1200, line), 0.0);                            // never negative
  EXPECT_NEAR(lr.rate(600), 2.0 / 16 / std::sqrt(600.0), 1e-12);  // without: the inverse square root
}

// A re-estimated end turns the line where it was estimated: from that step, at the rate it had
// there, straight down to 0 at the new end.
TEST(LearningRate, ATurnedLineStartsAtItsStepAndRateAndEndsAtZero) {
  const LearningRateSchedule lr{256, 100, 2.0};
  EXPECT_NEAR(lr.peak(), 0.0125, 1e-15);
  // At step 600 the line from the peak to 1100 is at half the peak; the end moves from 1100 to 1600.
  DecayLine line{1600, 600, 0.5};
  EXPECT_NEAR(lr.rate(600, line), 0.0125 / 2, 1e-12);        // no jump at the turn
  EXPECT_NEAR(lr.rate(1100, line), 0.0125 / 4, 1e-12);       // halfway from 600 to 1600
  EXPECT_NEAR(lr.rate(1500, line), 0.0125 / 2 / 10, 1e-12);  // a tenth of the way left
  EXPECT_EQ(lr.rate(1600, line), 0.0);
  EXPECT_EQ(lr.rate(1700, line), 0.0);
  EXPECT_NEAR(lr.rate(50, line), 0.0125 / 2, 1e-12);  // the rise is untouched
  // The end moved nearer (a slower run): the line turns down more steeply, from the same point.
  line.end = 800;
  EXPECT_NEAR(lr.rate(600, line), 0.0125 / 2, 1e-12);
  EXPECT_NEAR(lr.rate(700, line), 0.0125 / 4, 1e-12);
  EXPECT_EQ(lr.rate(800, line), 0.0);
  // A line that starts in the warmup (from 0) starts at the peak, whatever its fraction says.
  EXPECT_NEAR(lr.rate(600, DecayLine{1100, 0, 0.25}), 0.0125 / 2, 1e-12);
}

// The progress holds the line once; the checkpoint keeps it under its old keys, so checkpoints
// written before the line had a struct of its own load as they did.
TEST(Checkpoint, TheDecayLineKeepsItsKeysInTheProgressJson) {
  TrainingProgress p;
  p.decay = DecayLine{1234, 1000, 0.25};
  const nlohmann::json j = p;
  EXPECT_EQ(j.at("decay_end"), 1234);
  EXPECT_EQ(j.at("decay_from"), 1000);
  EXPECT_EQ(j.at("decay_from_fraction"), 0.25);
  EXPECT_FALSE(j.contains("decay"));
  nlohmann::json old = j;
  old.erase("decay_end");
  old.erase("decay_from");
  old.erase("decay_from_fraction");
  const auto back = old.get<TrainingProgress>();  // a checkpoint from before linear decay
  EXPECT_EQ(back.decay.end, 0);
  EXPECT_EQ(back.decay.from, 0);
  EXPECT_EQ(back.decay.from_fraction, 1.0);
  EXPECT_EQ(j.get<TrainingProgress>().decay.from_fraction, 0.25);
}

TEST(Checkpoint, RoundTripRestoresWeightsMomentsAndProgress) {
  auto dir = testing::fresh_temp_dir("checkpoint_roundtrip");
  const ModelConfig c = ModelConfig::preset("tiny");
  Transformer model(c);
  model.initialize(1);
  AdamOptimizer adam(model);
  const testing::ToyBatch batch({{5, 6, 7}}, {{8, 9}});
  for (int i = 0; i < 3; ++i) {
    model.zero_gradients();
    model.forward_backward(batch.view(), nn::Dropout{0.1f, static_cast<std::uint64_t>(i)}, 0.5f);
    adam.step(1e-3f);
  }
  TrainingProgress progress;
  progress.step = 3;
  progress.epoch = 2;
  progress.next_batch = 17;
  progress.best_valid_loss = 4.25;
  progress.decay.end = 1234;   // lr_decay linear under a time budget: a resumed run decays as before,
  progress.decay.from = 1000;  // along the same line
  progress.decay.from_fraction = 0.123456789012345678;
  save_checkpoint(checkpoint_path(dir, 3), model, adam, progress, {{"note", "x"}});

  Transformer restored(c);
  AdamOptimizer restored_adam(restored);
  const CheckpointContents back = load_checkpoint(checkpoint_path(dir, 3), restored, &restored_adam);
  EXPECT_EQ(restored.parameters_to_host(), model.parameters_to_host());
  const auto n = static_cast<std::size_t>(model.parameter_count());
  EXPECT_EQ(testing::to_host(model.backend(), restored_adam.first_moment(), n),
            testing::to_host(model.backend(), adam.first_moment(), n));
  EXPECT_EQ(testing::to_host(model.backend(), restored_adam.second_moment(), n),
            testing::to_host(model.backend(), adam.second_moment(), n));
  EXPECT_EQ(restored_adam.steps(), 3);
  EXPECT_EQ(back.progress.next_batch, 17);
  EXPECT_EQ(back.progress.epoch, 2);
  EXPECT_EQ(back.progress.best_valid_loss, 4.25);
  EXPECT_EQ(back.progress.decay.end, 1234);
  EXPECT_EQ(back.progress.decay.from, 1000);
  EXPECT_EQ(back.progress.decay.from_fraction, 0.123456789012345678);  // to the bit
  EXPECT_EQ(back.options.at("note"), "x");
  EXPECT_EQ(list_checkpoints(dir), std::vector<std::filesystem::path>{checkpoint_path(dir, 3)});
}

// sentence_tokens is what the training data says, recomputed at every start: a checkpoint written
// before attn recorded it (or from other data) resumes; any other difference in the model is refused.
TEST(Checkpoint, TheRecordedSentenceLengthIsNotPartOfTheModelComparison) {
  auto dir = testing::fresh_temp_dir("checkpoint_sentence_tokens");
  const ModelConfig before = ModelConfig::preset("tiny");
  Transformer model(before);
  model.initialize(1);
  AdamOptimizer adam(model);
  save_checkpoint(checkpoint_path(dir, 1), model, adam, TrainingProgress{}, {{"note", "x"}});

  ModelConfig now = before;
  now.sentence_tokens = 30;
  Transformer resumed(now);
  AdamOptimizer resumed_adam(resumed);
  EXPECT_NO_THROW(load_checkpoint(checkpoint_path(dir, 1), resumed, &resumed_adam));
  EXPECT_EQ(resumed.parameters_to_host(), model.parameters_to_host());
  EXPECT_EQ(resumed.config().sentence_tokens, 30);

  ModelConfig other = now;
  other.d_ff += 8;
  Transformer different(other);
  EXPECT_THROW(load_checkpoint(checkpoint_path(dir, 1), different, nullptr), Error);
}

TEST(Checkpoint, TruncatedOrCorruptedFilesAreRefusedWithoutTouchingTheModel) {
  auto dir = testing::fresh_temp_dir("checkpoint_corrupt");
  const ModelConfig c = ModelConfig::preset("tiny");
  Transformer model(c);
  model.initialize(2);
  AdamOptimizer adam(model);
  save_checkpoint(dir / "good.safetensors", model, adam, {}, {});
  std::ifstream in(dir / "good.safetensors", std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), {}};

  std::ofstream(dir / "truncated.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string flipped = bytes;
  flipped[flipped.size() - 10] ^= 0x40;  // one bit in the optimizer's data
  std::ofstream(dir / "flipped.safetensors", std::ios::binary) << flipped;

  Transformer other(c);
  other.initialize(3);
  const auto before = other.parameters_to_host();
  AdamOptimizer other_adam(other);
  expect_error([&] { load_checkpoint(dir / "truncated.safetensors", other, &other_adam); }, "truncated.safetensors");
  expect_error([&] { load_checkpoint(dir / "flipped.safetensors", other, &other_adam); },
               "corrupted checkpoint: the data does not match its SHA-256 checksum");
  EXPECT_EQ(other.parameters_to_host(), before);
  ModelConfig wider = c;
  wider.d_ff = 128;
  Transformer different(wider);
  expect_error([&] { load_checkpoint(dir / "good.safetensors", different, nullptr); }, "different model configuration");
  load_checkpoint(dir / "good.safetensors", other, &other_adam);  // the good one still loads
  EXPECT_EQ(other.parameters_to_host(), model.parameters_to_host());
}

TEST(Checkpoint, AveragingIsTheElementWiseMean) {
  auto dir = testing::fresh_temp_dir("checkpoint_average");
  const ModelConfig c = ModelConfig::preset("tiny");
  std::vector<std::vector<float>> weights;
  std::vector<std::filesystem::path> paths;
  for (int i = 0; i < 3; ++i) {
    Transformer m(c);
    m.initialize(10 + i);
    AdamOptimizer adam(m);
    weights.push_back(m.parameters_to_host());
    paths.push_back(checkpoint_path(dir, 100 * (i + 1)));
    save_checkpoint(paths.back(), m, adam, {}, {});
  }
  const auto mean = average_weights(paths, c);
  ASSERT_EQ(mean.size(), weights[0].size());
  for (std::size_t i = 0; i < mean.size(); ++i)
    ASSERT_FLOAT_EQ(mean[i],
                    static_cast<float>((static_cast<double>(weights[0][i]) + weights[1][i] + weights[2][i]) / 3))
        << i;
}

// The update of a checkpoint comes from its name, and the checkpoints of a run are listed by it: a
// run past 99999999 updates writes 9 digits, which sort before 8 by name.
TEST(Checkpoint, NamesGiveTheUpdateAndOrderTheList) {
  EXPECT_EQ(checkpoint_step("run/checkpoints/step-00001234.safetensors"), 1234);
  EXPECT_EQ(checkpoint_step(checkpoint_path("x", 16948)), 16948);
  EXPECT_EQ(checkpoint_step("step-100000000.safetensors"), 100000000);
  expect_error([] { checkpoint_step("run/checkpoints/model.safetensors"); },
               "run/checkpoints/model.safetensors: not a checkpoint's name");
  expect_error([] { checkpoint_step("step-12a.safetensors"); }, "not a checkpoint's name");
  // The names the list leaves out are the names checkpoint_step refuses: one pattern for both.
  expect_error([] { checkpoint_step("step-5.safetensors"); }, "not a checkpoint's name");
  expect_error([] { checkpoint_step("step-1234567890123456789.safetensors"); }, "not a checkpoint's name");
  const auto dir = testing::fresh_temp_dir("checkpoint_names");
  for (const char* name : {"step-100000000.safetensors", "step-99999999.safetensors", "step-00000050.safetensors",
                           "notes.txt", "step-5.safetensors", "step-1234567890123456789.safetensors"})
    std::ofstream(dir / name) << "x";
  const auto listed = list_checkpoints(dir);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].filename(), "step-00000050.safetensors");
  EXPECT_EQ(listed[1].filename(), "step-99999999.safetensors");
  EXPECT_EQ(listed[2].filename(), "step-100000000.safetensors");
  EXPECT_FALSE(last_checkpoint_progress(dir / "none").has_value());
}

}  // namespace
}  // namespace attn
