// The training options: every value of the wrong type names the file, the key and what it
// accepts; every numeric option refuses values that make no sense, naming itself.
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "core/error.h"
#include "train/train_options.h"

namespace attn {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TrainOptions usable() {
  TrainOptions o;
  o.train_source = std::string("a");
  o.train_target = std::string("b");
  o.vocabulary = std::string("v");
  return o;
}

TEST(TrainOptions, WrongTypesNameTheSourceTheKeyAndTheAcceptedValues) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"positions": 1})", "config.json: option 'positions' must be \"sinusoidal\" or \"learned\", got 1"},
      {R"({"batch_tokens": "many"})", "config.json: option 'batch_tokens' must be a whole number from"},
      {R"({"batch_tokens": 4096.5})",
       "option 'batch_tokens' must be a whole number from -2147483648 to 2147483647, got 4096.5"},
      {R"({"max_steps": 1e30})", "option 'max_steps' must be a whole number from"},
      {R"({"seed": -1})", "option 'seed' must be a whole number from 0 to 18446744073709551615, got -1"},
      {R"({"lr_scale": "2"})", "option 'lr_scale' must be a number, got \"2\""},
      {R"({"clip_norm": 1e39})", "option 'clip_norm' must be a number a float holds, got 1e+39"},
      {R"({"run_dir": 5})", "option 'run_dir' must be a string, got 5"},
      {R"({"d_model": [512]})", "option 'd_model' must be a whole number"},
      {R"({"preset": 1})", "option 'preset' must be one of"},
  };
  for (const auto& [text, fragment] : cases) {
    TrainOptions o = usable();
    const std::string e = error_of([&] { apply_options_json(nlohmann::json::parse(text), o, "config.json"); });
    EXPECT_NE(e.find(fragment), std::string::npos) << text << " -> " << e;
  }
  // Whole numbers written as floats are fine.
  TrainOptions o = usable();
  apply_options_json(nlohmann::json::parse(R"({"batch_tokens": 4e3, "seed": 7})"), o, "config.json");
  EXPECT_EQ(o.batch_tokens, 4000);
  EXPECT_EQ(o.seed, 7u);
}

// Every numeric option set to -1 is refused by validate() (or by reading it), naming the option.
TEST(TrainOptions, EveryNumericOptionRefusesNegativeValuesNamingItself) {
  TrainOptions scratch;
  int checked = 0;
  for (const auto& f : option_fields(scratch)) {
    if (std::holds_alternative<std::string*>(f.target) || std::holds_alternative<PositionEncoding*>(f.target)) continue;
    TrainOptions o = usable();
    const std::string e = error_of([&] {
      apply_options_json({{f.name, -1}}, o, "test");
      validate(o);
    });
    EXPECT_NE(e.find(f.name), std::string::npos) << f.name << " = -1 gave: '" << e << "'";
    ++checked;
  }
  EXPECT_GE(checked, 30);
  // Betas at 1 would divide by zero in Adam's bias correction...
  // ... and so would an average that never moves.
  for (const char* beta : {"adam_beta1", "adam_beta2", "ema_decay"}) {
    TrainOptions o = usable();
    apply_options_json({{beta, 1.0}}, o, "test");
    EXPECT_NE(error_of([&] { validate(o); }).find(beta), std::string::npos);
  }
  // BPE-dropout 1 would skip every merge: the text in single characters, the vocabulary unused.
  TrainOptions o = usable();
  apply_options_json({{"bpe_dropout", 1.0}}, o, "test");
  EXPECT_NE(error_of([&] { validate(o); }).find("bpe_dropout must be in [0, 1)"), std::string::npos);
  o.bpe_dropout = 0.1;
  EXPECT_EQ(error_of([&] { validate(o); }), "");
}

// The ranks' sum: one of two ways, and a bucket that holds something (0 would be no bucket: the
// one sum after the backward pass is asked for by name).
TEST(TrainOptions, AllreduceIsOverlappedOrAfterTheBackwardPassWithARealBucket) {
  TrainOptions o = usable();
  EXPECT_EQ(o.allreduce, "overlapped");
  apply_options_json(nlohmann::json::parse(R"({"allreduce": "ring"})"), o, "test");
  EXPECT_NE(error_of([&] { validate(o); }).find("allreduce must be \"overlapped\" or \"after_backward\", got \"ring\""),
            std::string::npos);
  o.allreduce = "after_backward";
  EXPECT_EQ(error_of([&] { validate(o); }), "");
  for (double mb : {0.0, 65537.0, std::nan("")}) {
    o.allreduce_bucket_mb = mb;
    EXPECT_NE(error_of([&] { validate(o); }).find("allreduce_bucket_mb must be a size in MB above 0 and at most 65536"),
              std::string::npos)
        << mb;
  }
  o.allreduce_bucket_mb = 0.5;
  EXPECT_EQ(error_of([&] { validate(o); }), "");
  // The gradient on the wire: fp32 (the default) or bf16.
  EXPECT_EQ(o.allreduce_precision, "fp32");
  apply_options_json(nlohmann::json::parse(R"({"allreduce_precision": "fp16"})"), o, "test");
  EXPECT_NE(error_of([&] { validate(o); }).find("allreduce_precision must be \"fp32\" or \"bf16\", got \"fp16\""),
            std::string::npos);
  o.allreduce_precision = "bf16";
  EXPECT_EQ(error_of([&] { validate(o); }), "");
}

// The ranks' watch: off (0) or a timeout of at least a second (a heartbeat goes every tenth of
// it, at most every second), a day at most; a config file's key names the same thing.
TEST(TrainOptions, PeerTimeoutIsOffOrFromOneSecondToADay) {
  TrainOptions o = usable();
  EXPECT_EQ(o.peer_timeout_seconds, 60);
  for (double s : {0.5, -1.0, 86401.0, std::nan("")}) {
    o.peer_timeout_seconds = s;
    EXPECT_NE(error_of([&] { validate(o); }).find("peer_timeout_seconds must be 0 (not watched) or from 1 to 86400"),
              std::string::npos)
        << s;
  }
  for (double s : {0.0, 1.0, 86400.0}) {
    o.peer_timeout_seconds = s;
    EXPECT_EQ(error_of([&] { validate(o); }), "") << s;
  }
  apply_options_json(nlohmann::json::parse(R"({"peer_timeout_seconds": 5})"), o, "test");
  EXPECT_EQ(o.peer_timeout_seconds, 5);
}

// lr_decay: one of three names; "linear" needs the step it decays to 0 at, after the warmup.
TEST(TrainOptions, LinearDecayNeedsMaxStepsBeyondTheWarmup) {
  TrainOptions o = usable();
  apply_options_json(nlohmann::json::parse(R"({"lr_decay": "cosine"})"), o, "test");
  EXPECT_NE(
      error_of([&] { validate(o); }).find("lr_decay must be \"inverse_sqrt\", \"linear\" or \"auto\", got \"cosine\""),
      std::string::npos);
  apply_options_json(nlohmann::json::parse(R"({"lr_decay": "linear", "warmup_steps": 100})"), o, "test");
  EXPECT_NE(error_of([&] { validate(o); }).find("give max_steps above warmup_steps (100)"), std::string::npos);
  o.max_steps = 100;
  EXPECT_NE(error_of([&] { validate(o); }).find("give max_steps above warmup_steps"), std::string::npos);
  o.max_steps = 101;
  EXPECT_EQ(error_of([&] { validate(o); }), "");
}

// lr_decay "auto" (cpu-hour's): linear wherever the run has an end to decay to, the paper's inverse
// square root where it has none (or where max_steps ends it within the warmup), and never an error.
TEST(TrainOptions, AutomaticDecayIsLinearWhereTheRunHasAnEnd) {
  struct Case {
    std::int64_t max_steps;
    double minutes;
    const char* decay;
  };
  for (const Case c : {Case{0, 45, "linear"}, Case{101, 0, "linear"}, Case{101, 45, "linear"},
                       Case{100, 45, "inverse_sqrt"}, Case{50, 0, "inverse_sqrt"}, Case{0, 0, "inverse_sqrt"}}) {
    TrainOptions o = usable();
    o.warmup_steps = 100;
    o.lr_decay = "auto";
    o.max_steps = c.max_steps;
    o.time_budget_minutes = c.minutes;
    EXPECT_EQ(error_of([&] { validate(o); }), "");
    EXPECT_NE(resolve_lr_decay(o).find(std::string("lr_decay auto: ") + c.decay), std::string::npos);
    EXPECT_EQ(o.lr_decay, c.decay) << "max_steps " << c.max_steps << ", " << c.minutes << " minutes";
    EXPECT_EQ(error_of([&] { validate(o); }), "");
  }
  for (const char* given : {"linear", "inverse_sqrt"}) {  // a decay given is kept
    TrainOptions o = usable();
    o.lr_decay = given;
    o.time_budget_minutes = 45;
    EXPECT_EQ(resolve_lr_decay(o), "");
    EXPECT_EQ(o.lr_decay, given);
  }
}

// A preset sets the model keys and the recipe keys; choosing another undoes them; keys beside it in
// the same object, and later sources, win. The values are written out by hand from docs/config.md.
TEST(TrainOptions, PresetsSetTheModelAndTheRecipeAndAnotherPresetUndoesThem) {
  TrainOptions o = usable();
  o.model.vocab_size = 4000;  // the vocabulary's size is not the preset's
  apply_options_json(nlohmann::json::parse(R"({"preset": "cpu-hour"})"), o, "config.json");
  EXPECT_EQ(o.preset, "cpu-hour");
  EXPECT_EQ(o.model.d_model, 256);
  EXPECT_EQ(o.model.encoder_layers, 3);
  EXPECT_EQ(o.model.decoder_layers, 3);
  EXPECT_EQ(o.model.d_ff, 1024);
  EXPECT_EQ(o.model.heads, 4);
  EXPECT_EQ(o.model.dropout, 0.1f);
  EXPECT_EQ(o.dropout_from_epoch, 5);
  EXPECT_EQ(o.batch_tokens, 1024);
  EXPECT_EQ(o.warmup_steps, 3200);
  EXPECT_EQ(o.lr_decay, "auto");
  EXPECT_EQ(o.model.vocab_size, 4000);
  EXPECT_EQ(error_of([&] { validate(o); }), "");

  o.accumulate = 3;
  o.lr_decay = "linear";
  o.ema_decay = 0.999;
  o.dropout_from_epoch = 3;
  apply_options_json(nlohmann::json::parse(R"({"preset": "small"})"), o, "config.json");
  EXPECT_EQ(o.ema_decay, 0.0);
  EXPECT_EQ(o.dropout_from_epoch, 1);
  EXPECT_EQ(o.preset, "small");
  EXPECT_EQ(o.model.dropout, 0.1f);
  EXPECT_EQ(o.batch_tokens, 4096);
  EXPECT_EQ(o.warmup_steps, 4000);
  EXPECT_EQ(o.accumulate, 1);
  EXPECT_EQ(o.lr_decay, "inverse_sqrt");
  EXPECT_EQ(o.model.vocab_size, 4000);

  apply_options_json(nlohmann::json::parse(R"({"batch_tokens": 3000, "preset": "cpu-hour", "dropout": 0.2})"), o,
                     "config.json");
  EXPECT_EQ(o.batch_tokens, 3000);
  EXPECT_EQ(o.warmup_steps, 3200);
  EXPECT_EQ(o.model.dropout, 0.2f);

  EXPECT_EQ(train_preset_names(), (std::vector<std::string>{"base", "big", "small", "tiny", "cpu-hour"}));
  for (const auto& name : train_preset_names()) EXPECT_EQ(train_preset(name).at("preset"), name);
  const std::string e =
      error_of([&] { apply_options_json(nlohmann::json::parse(R"({"preset": "hour"})"), o, "config.json"); });
  EXPECT_NE(e.find("config.json: unknown preset 'hour' (known: base, big, small, tiny, cpu-hour)"), std::string::npos)
      << e;
}

// What --dump-config prints for a preset is a --config file that gives the same configuration, and
// the command line's flags win over the preset.
TEST(TrainOptions, APresetRoundTripsThroughDumpConfig) {
  const auto dir = testing::fresh_temp_dir("preset_dump");
  const auto first = testing::run_attn("train --preset cpu-hour --dump-config");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto j = nlohmann::json::parse(first.output);
  EXPECT_EQ(j.at("preset"), "cpu-hour");
  EXPECT_EQ(j.at("batch_tokens"), 1024);
  EXPECT_EQ(j.at("warmup_steps"), 3200);
  EXPECT_EQ(j.at("dropout"), 0.1);
  EXPECT_EQ(j.at("dropout_from_epoch"), 5);
  EXPECT_EQ(j.at("d_model"), 256);
  const auto file = dir / "cpu-hour.json";
  std::ofstream(file) << first.output;
  const auto second = testing::run_attn("train --config " + file.string() + " --dump-config");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(nlohmann::json::parse(second.output), j);
  const auto flags = testing::run_attn(
      "train --preset cpu-hour --warmup-steps 800 --dropout 0.2 --dropout-from-epoch 1 --dump-config");
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  const auto k = nlohmann::json::parse(flags.output);
  EXPECT_EQ(k.at("warmup_steps"), 800);
  EXPECT_EQ(k.at("dropout"), 0.2);
  EXPECT_EQ(k.at("dropout_from_epoch"), 1);
  EXPECT_EQ(k.at("batch_tokens"), 1024);
  const auto bad = testing::run_attn("train --preset hour --dump-config");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--preset: unknown preset 'hour'"), std::string::npos) << bad.output;
}

// docs/config.md documents every option with the default --dump-config prints (the defaults are
// the small preset's), and documents no option that does not exist.
TEST(TrainOptions, DocsConfigListsEveryOptionWithItsDefault) {
  std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in) << "docs/config.md";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json defaults = options_to_json(TrainOptions{});
  for (const auto& [key, value] : defaults.items())
    EXPECT_NE(doc.find("| `" + key + "` | `" + value.dump() + "` |"), std::string::npos)
        << "docs/config.md has no row | `" << key << "` | `" << value.dump() << "` |";
  // Rows "| `key` | `value` | ..." (the presets table's rows have no backquoted second column).
  int rows = 0;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::size_t end = line.find("` | `", 3);
    if (end == std::string::npos) continue;
    const std::string key = line.substr(3, end - 3);
    ++rows;
    EXPECT_TRUE(defaults.contains(key)) << "docs/config.md documents '" << key << "', not an option";
  }
  EXPECT_EQ(rows, static_cast<int>(defaults.size()));
}

}  // namespace
}  // namespace attn
