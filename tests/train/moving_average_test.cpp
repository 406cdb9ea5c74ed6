// The exponential moving average of the weights (ema_decay): its decay by hand, the average
// against the recursion worked in double over the weights each update left, checkpoints that keep
// it, the delivered models written from it, and a resumed run equal to an uninterrupted one.
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "common/device_vector.h"
#include "common/temp_dir.h"
#include "common/toy_batch.h"
#include "core/error.h"
#include "decode/model_directory.h"
#include "model/safetensors.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train_test_support.h"

namespace attn {
namespace {

constexpr double kU = 1.0 / (1 << 24);

// d_t = min(ema_decay, (1 + t) / (10 + t)), worked by hand.
TEST(MovingAverage, DecayWarmsUpAsTensorFlowAndMarianDo) {
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.999, 1), 2.0 / 11);
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.999, 5), 0.4);
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.999, 990), 0.991);
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.999, 8990), 0.999);  // (1 + t) / (10 + t) = 0.999 exactly here
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.999, 100000), 0.999);
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.9, 80), 0.9);  // 81/90 = 0.9: the cap takes over at t = 80
  EXPECT_DOUBLE_EQ(AdamOptimizer::average_decay(0.9, 79), 80.0 / 89);
}

// The weights after each update, read back.
std::vector<std::vector<float>> train_toy(Transformer& model, AdamOptimizer& adam, int updates) {
  const testing::ToyBatch batch({{5, 6, 7, 8}, {9, 10}}, {{11, 12}, {13, 14, 15}});
  std::vector<std::vector<float>> weights;
  for (int i = 0; i < updates; ++i) {
    model.zero_gradients();
    model.forward_backward(batch.view(), nn::Dropout{0.1f, static_cast<std::uint64_t>(i)}, 0.2f);
    adam.step(2e-3f);
    weights.push_back(model.parameters_to_host());
  }
  return weights;
}

// a_0 = w_0, a_t = d_t · a_{t-1} + (1 - d_t) · w_t in double, with d_t from the formula, not the code.
std::vector<double> recursion(const std::vector<float>& w0, const std::vector<std::vector<float>>& w, double decay) {
  std::vector<double> a(w0.begin(), w0.end());
  for (std::size_t t = 1; t <= w.size(); ++t) {
    const double d = std::min(decay, (1.0 + static_cast<double>(t)) / (10.0 + static_cast<double>(t)));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = d * a[i] + (1 - d) * w[t - 1][i];
  }
  return a;
}

// Float rounding: about 3u per update of the largest value the average has held.
void expect_near_recursion(const std::vector<float>& got, const std::vector<double>& want, const std::vector<float>& w0,
                           const std::vector<std::vector<float>>& w) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    double largest = std::abs(w0[i]);
    for (const auto& wt : w) largest = std::max(largest, static_cast<double>(std::abs(wt[i])));
    const double tol = 3 * kU * static_cast<double>(w.size()) * largest;
    if (std::abs(got[i] - want[i]) > tol) {
      ++bad;
      ADD_FAILURE() << "parameter " << i << ": " << got[i] << ", the recursion gives " << want[i] << " (within " << tol
                    << ")";
    }
  }
}

TEST(MovingAverage, FollowsTheWeightsAsTheRecursionSaysAndSwapsInExactly) {
  const ModelConfig c = ModelConfig::preset("tiny");
  Transformer model(c);
  model.initialize(4);
  const std::vector<float> w0 = model.parameters_to_host();
  AdamOptions options;
  options.ema_decay = 0.9;
  AdamOptimizer adam(model, options);
  adam.reset_average();
  ASSERT_TRUE(adam.has_average());
  const auto n = static_cast<std::size_t>(model.parameter_count());
  EXPECT_EQ(testing::to_host(model.backend(), adam.average(), n), w0);  // it starts as the weights

  const auto w = train_toy(model, adam, 30);  // the cap (t = 80) is not reached: the warmup throughout
  const std::vector<float> average = testing::to_host(model.backend(), adam.average(), n);
  expect_near_recursion(average, recursion(w0, w, 0.9), w0, w);
  // The average lags the weights: it is not the last weights, nor the first.
  EXPECT_NE(average, w.back());
  EXPECT_NE(average, w0);

  // Swapped in while f runs, then both put back bit for bit, also when f throws.
  adam.with_average_weights([&] { EXPECT_EQ(model.parameters_to_host(), average); });
  EXPECT_EQ(model.parameters_to_host(), w.back());
  EXPECT_EQ(testing::to_host(model.backend(), adam.average(), n), average);
  EXPECT_THROW(adam.with_average_weights([&] { throw std::runtime_error("validation failed"); }), std::runtime_error);
  EXPECT_EQ(model.parameters_to_host(), w.back());
  EXPECT_EQ(testing::to_host(model.backend(), adam.average(), n), average);

  // Without an average: no buffer, and f sees the weights.
  Transformer plain(c);
  plain.initialize(4);
  AdamOptimizer plain_adam(plain);
  EXPECT_FALSE(plain_adam.has_average());
  EXPECT_EQ(plain_adam.average(), nullptr);
  plain_adam.with_average_weights([&] { EXPECT_EQ(plain.parameters_to_host(), w0); });
}

TEST(MovingAverage, CheckpointsKeepItAndOlderCheckpointsStartItFromTheirWeights) {
  const auto dir = testing::fresh_temp_dir("moving_average_checkpoint");
  const ModelConfig c = ModelConfig::preset("tiny");
  const auto n = static_cast<std::size_t>(Transformer(c).parameter_count());
  Transformer model(c);
  model.initialize(5);
  AdamOptions with;
  with.ema_decay = 0.99;
  AdamOptimizer adam(model, with);
  adam.reset_average();
  train_toy(model, adam, 4);
  TrainingProgress progress;
  progress.step = 4;
  save_checkpoint(dir / "with.safetensors", model, adam, progress, {});
  const std::vector<float> average = testing::to_host(model.backend(), adam.average(), n);
  EXPECT_NE(average, model.parameters_to_host());

  // The file holds it under optimizer.ema; a run with an average gets it back bit for bit.
  const SafetensorsFile file(dir / "with.safetensors");
  ASSERT_EQ(file.entries().count("optimizer.ema"), 1u);
  std::vector<float> stored(n);
  file.read("optimizer.ema", {static_cast<std::int64_t>(n)}, stored.data());
  EXPECT_EQ(stored, average);
  Transformer back(c);
  AdamOptimizer back_adam(back, with);
  EXPECT_TRUE(load_checkpoint(dir / "with.safetensors", back, &back_adam).had_average);
  EXPECT_EQ(testing::to_host(back.backend(), back_adam.average(), n), average);
  EXPECT_EQ(back.parameters_to_host(), model.parameters_to_host());

  // A run without one ignores it; a checkpoint without one starts the average from its weights.
  Transformer plain(c);
  AdamOptimizer plain_adam(plain);
  load_checkpoint(dir / "with.safetensors", plain, &plain_adam);
  EXPECT_EQ(plain.parameters_to_host(), model.parameters_to_host());
  save_checkpoint(dir / "without.safetensors", plain, plain_adam, progress, {});
  EXPECT_EQ(SafetensorsFile(dir / "without.safetensors").entries().count("optimizer.ema"), 0u);
  Transformer later(c);
  AdamOptimizer later_adam(later, with);
  EXPECT_FALSE(load_checkpoint(dir / "without.safetensors", later, &later_adam).had_average);
  EXPECT_EQ(testing::to_host(later.backend(), later_adam.average(), n), model.parameters_to_host());
}

// The reverse task with a moving average, a checkpoint after every update and dropout on. Decay
// 0.8: the warmup's (1 + t) / (10 + t) reaches it at update 35, so 40 updates see both.
TrainOptions averaged_run(const testing::ReverseTask& task, const std::filesystem::path& run, std::int64_t steps) {
  TrainOptions o = testing::reverse_task_options(task, run);
  o.ema_decay = 0.8;
  o.model.dropout = 0.1f;
  o.max_steps = steps;
  o.save_every = 1;
  o.keep_checkpoints = 1000;
  o.valid_every = 10;
  o.early_stopping = 0;
  o.log_every = 10;
  o.threads = 2;
  return o;
}

std::vector<float> model_weights(const std::filesystem::path& checkpoint, const ModelConfig& config) {
  const ParameterLayout layout(config);
  const SafetensorsFile file(checkpoint);
  std::vector<float> w(static_cast<std::size_t>(layout.total()));
  for (const auto& t : layout.tensors()) file.read(t.name, t.shape, w.data() + t.offset);
  return w;
}

std::vector<float> stored_average(const std::filesystem::path& checkpoint, std::int64_t n) {
  std::vector<float> a(static_cast<std::size_t>(n));
  SafetensorsFile(checkpoint).read("optimizer.ema", {n}, a.data());
  return a;
}

std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// model/ is the average of every update's weights (read from the checkpoint written after each),
// starting from the initial weights; best/ is the average at the best validation; the checkpoints
// keep the weights themselves.
TEST(MovingAverage, TrainingDeliversTheAverageOfEveryUpdatesWeights) {
  const auto dir = testing::fresh_temp_dir("moving_average_training");
  const auto task = testing::make_reverse_task(dir, 2000, 40);
  const TrainOptions o = averaged_run(task, dir / "run", 40);
  std::ostringstream log;
  const TrainResult r = Trainer(o, log).run(false);
  ASSERT_EQ(r.stop_reason, "max_steps") << log.str();

  const auto checkpoints = list_checkpoints(dir / "run" / "checkpoints");
  ASSERT_EQ(checkpoints.size(), 40u);
  const CheckpointContents last = inspect_checkpoint(checkpoints.back());
  Transformer initial(last.model_config);
  initial.initialize(o.seed);  // a fresh run's weights before its first update
  const std::vector<float> w0 = initial.parameters_to_host();
  std::vector<std::vector<float>> w;
  for (const auto& c : checkpoints) w.push_back(model_weights(c, last.model_config));

  const LoadedModel delivered = load_model_directory(dir / "run" / "model");
  const std::vector<float> model = delivered.model->parameters_to_host();
  expect_near_recursion(model, recursion(w0, w, 0.8), w0, w);
  // The first updates, where the initial weights still weigh (2/11 after update 1): the average
  // starts from them.
  for (std::size_t t = 1; t <= 3; ++t) {
    SCOPED_TRACE("after update " + std::to_string(t));
    const std::vector<std::vector<float>> first(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(t));
    expect_near_recursion(stored_average(checkpoints[t - 1], initial.parameter_count()), recursion(w0, first, 0.8), w0,
                          first);
  }
  EXPECT_EQ(model, stored_average(checkpoints.back(), initial.parameter_count()));
  EXPECT_NE(model, w.back());  // the checkpoint's model tensors are the weights, not the average
  EXPECT_EQ(SafetensorsFile(dir / "run" / "model" / "model.safetensors").metadata().at("ema_decay"), "0.8");

  // Validations at 10, 20, 30, 40: best/ is the average of the best one's update.
  ASSERT_GT(r.progress.best_step, 0);
  const LoadedModel best = load_model_directory(dir / "run" / "best");
  EXPECT_EQ(best.model->parameters_to_host(),
            stored_average(checkpoints[static_cast<std::size_t>(r.progress.best_step - 1)], initial.parameter_count()));
}

// Every tensor of `some` equals the tensor of that name in `other`, byte for byte.
void expect_same_tensors(const SafetensorsFile& some, const SafetensorsFile& other, const std::string& context) {
  for (const auto& [name, entry] : some.entries()) {
    const auto& theirs = other.entries().at(name);
    EXPECT_TRUE(some.data().substr(entry.begin, entry.end - entry.begin) ==
                other.data().substr(theirs.begin, theirs.end - theirs.begin))
        << name << " differs" << context;
  }
}

// Stopped at update 20 and resumed to 40, the run ends exactly as one that went straight to 40:
// weights, moments, the average, and the delivered model; and a run without the average has the
// same weights and moments.
TEST(MovingAverage, AResumedRunEqualsAnUninterruptedOneBitForBit) {
  const auto dir = testing::fresh_temp_dir("moving_average_resume");
  const auto task = testing::make_reverse_task(dir, 2000, 40);
  std::ostringstream log;
  TrainOptions straight = averaged_run(task, dir / "straight", 40);
  straight.save_every = 20;
  ASSERT_EQ(Trainer(straight, log).run(false).stop_reason, "max_steps") << log.str();
  TrainOptions first = averaged_run(task, dir / "resumed", 20);
  first.save_every = 20;
  ASSERT_EQ(Trainer(first, log).run(false).stop_reason, "max_steps") << log.str();
  TrainOptions second = first;
  second.max_steps = 40;
  ASSERT_EQ(Trainer(second, log).run(true).stop_reason, "max_steps") << log.str();

  const SafetensorsFile a(checkpoint_path(dir / "straight" / "checkpoints", 40));
  const SafetensorsFile b(checkpoint_path(dir / "resumed" / "checkpoints", 40));
  ASSERT_EQ(a.entries().size(), b.entries().size());
  ASSERT_EQ(a.entries().count("optimizer.ema"), 1u);
  expect_same_tensors(a, b, "");
  EXPECT_TRUE(bytes_of(dir / "straight" / "model" / "model.safetensors") ==
              bytes_of(dir / "resumed" / "model" / "model.safetensors"))
      << "the delivered models differ";

  // The average changes nothing of the training: without it, the weights and moments are the same.
  TrainOptions plain = straight;
  plain.run_dir = (dir / "plain").string();
  plain.ema_decay = 0;
  ASSERT_EQ(Trainer(plain, log).run(false).stop_reason, "max_steps") << log.str();
  const SafetensorsFile c(checkpoint_path(dir / "plain" / "checkpoints", 40));
  EXPECT_EQ(c.entries().size() + 1, a.entries().size());
  expect_same_tensors(c, a, " with the average kept");
}

// Switching the average on in a resumed run is refused unless asked for; asked for, it starts from
// the checkpoint's weights, and the best dev loss, measured on other weights, starts over.
TEST(MovingAverage, SwitchedOnAtAResumeStartsFromTheWeightsAndTheBestStartsOver) {
  const auto dir = testing::fresh_temp_dir("moving_average_switch");
  const auto task = testing::make_reverse_task(dir, 2000, 40);
  std::ostringstream log;
  TrainOptions first = averaged_run(task, dir / "run", 20);
  first.ema_decay = 0;
  first.save_every = 20;
  ASSERT_EQ(Trainer(first, log).run(false).stop_reason, "max_steps") << log.str();
  // A best dev loss no model reaches, so that only a reset lets a later validation be the best.
  {
    const auto path = checkpoint_path(dir / "run" / "checkpoints", 20);
    const CheckpointContents c = inspect_checkpoint(path);
    Transformer model(c.model_config);
    AdamOptimizer adam(model);
    load_checkpoint(path, model, &adam);
    TrainingProgress unbeatable = c.progress;
    unbeatable.best_valid_loss = 1e-30;
    save_checkpoint(path, model, adam, unbeatable, c.options);
  }
  TrainOptions second = first;
  second.ema_decay = 0.8;
  second.max_steps = 40;
  std::string refused;
  try {
    Trainer(second, log).run(true);
  } catch (const Error& e) {
    refused = e.what();
  }
  EXPECT_NE(refused.find("ema_decay is 0.8 now, 0.0 in the checkpoint"), std::string::npos) << refused;
  std::ostringstream resumed;
  const TrainResult r = Trainer(second, resumed).run(true, true);
  ASSERT_EQ(r.stop_reason, "max_steps") << resumed.str();
  EXPECT_NE(resumed.str().find("holds no moving average of the weights; the average (ema_decay) starts from its "
                               "weights"),
            std::string::npos)
      << resumed.str();
  EXPECT_NE(resumed.str().find("ema_decay switched on"), std::string::npos) << resumed.str();
  // The validations at 30 and 40 compete only with each other: the best before measured the weights.
  EXPECT_GT(r.progress.best_step, 20) << resumed.str();
  EXPECT_GT(r.progress.best_valid_loss, 1e-30);
}

}  // namespace
}  // namespace attn
