#pragma once
// Everything `attn train` can be told, with the paper's defaults where it has one. One table of
// fields serves the JSON config file, the command line (--name value) and --dump-config.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/model_config.h"

namespace attn {

struct TrainOptions {
  // Data.
  std::string train_source, train_target;  // parallel text, one sentence per line
  std::string valid_source, valid_target;  // the dev set: validation loss, BLEU, chrF
  std::string vocabulary;                  // SentencePiece model shared by both sides
  std::string run_dir = "run";             // checkpoints, logs, the final and best models
  std::string source_lang, target_lang;    // language codes ("en", "es"), recorded in the model folders
  int max_length = 256;                    // tokens per side; longer pairs are dropped and counted
  int batch_tokens = 4096;                 // source and target tokens per batch, padding included
  int accumulate = 1;                      // batches per update and rank: ~batch_tokens × ranks × accumulate tokens
  // Optimisation (section 5.3).
  double lr_scale = 1.0;  // multiplies d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)
  int warmup_steps = 4000;
  std::string lr_decay = "inverse_sqrt";  // after warmup: "inverse_sqrt" (the paper), or "linear" to 0
                                          // at max_steps, or under a time budget alone at the update the
                                          // budget ends with (estimated again as the run goes), or
                                          // "auto": linear where the run has such an end, else
                                          // inverse_sqrt (resolve_lr_decay)
  float adam_beta1 = 0.9f, adam_beta2 = 0.98f, adam_eps = 1e-9f;
  float clip_norm = 0;   // > 0: rescale gradients whose L2 norm exceeds it
  double ema_decay = 0;  // > 0: keep an exponential moving average of the weights (adam_optimizer.h),
                         // which validation, best/, snapshots and model/ use; 0: off
  // Dropout and activation dropout train from this pass over the data on (1: from the start, as the
  // paper; N > 1: "late dropout", none while the model is still far from overfitting).
  int dropout_from_epoch = 1;
  // BPE-dropout (Provilkov et al., 2020; data/bpe_dropout.h): each epoch from dropout_from_epoch on,
  // the training text is cut into pieces again with each BPE merge skipped with this probability
  // (0: off, the usual pieces throughout; the paper: 0.1). Validation and decoding keep the usual pieces.
  double bpe_dropout = 0;
  // Stopping: whichever comes first (0 = no limit).
  std::int64_t max_steps = 0;
  int max_epochs = 0;
  double time_budget_minutes = 0;  // training wall-clock time (resumed runs count it all)
  int early_stopping = 10;         // validations without a better dev loss; 0 = never
  // Validation.
  int valid_every = 500;      // steps
  int valid_translate = 200;  // dev sentences translated greedily for BLEU/chrF; 0 = none
  // Checkpoints.
  int save_every = 1000;           // steps; 0 = only by time and at the end
  double save_every_minutes = 10;  // 0 = only by steps and at the end
  int keep_checkpoints = 5;        // the last K are kept (the paper averages the last 5)
  int snapshot_every_minutes = 0;  // > 0: also keep a model folder every N minutes of training
                                   // (snapshots/minute-NNN), to see what a shorter budget gives
  // Progress.
  int log_every = 50;      // steps between progress lines and log records
  std::uint64_t seed = 1;  // initialisation, batch order and dropout
  int threads = 0;         // 0 = all cores
  // Across ranks (mpirun): "overlapped" sums the gradient in buckets of allreduce_bucket_mb MB as
  // the backward pass finishes them (train/gradient_buckets.h), "after_backward" in one sum after
  // it. The same bits either way with 2 ranks.
  std::string allreduce = "overlapped";
  double allreduce_bucket_mb = 8;
  // The gradient on the wire between ranks: "fp32", or "bf16" (half the bytes; each rank's gradient
  // and each partial sum rounded to bfloat16: train/dist/communicator.h's WirePrecision).
  std::string allreduce_precision = "fp32";
  // Across ranks: a rank that hears nothing from another for this long (its node down, its link
  // cut, its process stopped) ends, naming it (train/dist/peer_watch.h); 0: not watched.
  double peer_timeout_seconds = 60;
  std::string precision = "fp32";  // large matrix products: fp32, or bf16 (mixed precision:
                                   // bf16 inputs, fp32 sums; needs AVX512-BF16; speed:
                                   // bench/train_step_bench --precision bf16)
  std::string preset = "small";    // the preset the model fields and the recipe keys start from
  ModelConfig model = ModelConfig::preset("small");
};

// One settable field: its name (as in the JSON file; --name on the command line), its help and
// where it lives.
struct OptionField {
  std::string name;
  std::string help;
  std::variant<int*, std::int64_t*, std::uint64_t*, float*, double*, std::string*, PositionEncoding*> target;
  bool model = false;  // part of the model configuration
};

std::vector<OptionField> option_fields(TrainOptions& options);

// The presets of attn train: each is a model preset (model_config.h) and the recipe keys it sets.
// "base", "big", "small" and "tiny" are the model presets with the default recipe; "cpu-hour" is the
// small model with the recipe chosen for about an hour of a 2-core CPU (docs/recipe.md).
std::vector<std::string> train_preset_names();
// The keys a preset sets, as options JSON: "preset" (its name) and every recipe key, including those
// it leaves at their defaults, so that choosing a preset undoes another's. Throws Error for an
// unknown name, listing the known ones.
nlohmann::json train_preset(const std::string& name);

// The effective configuration as JSON (all fields) and back. Unknown keys are errors; a "preset"
// key resets the model fields and the recipe keys to that preset before the other keys apply.
nlohmann::json options_to_json(const TrainOptions& options);
void apply_options_json(const nlohmann::json& j, TrainOptions& options, const std::string& source);
// Parses a JSON options file (errors name the file); apply it with apply_options_json.
nlohmann::json read_options_file(const std::string& path);

// The options of `attn train`'s command line, in order of precedence: the defaults, the preset
// (unless ""), the config file (unless ""), then the flags given (field name → the text as typed:
// numbers parsed, strings kept). Throws Error naming the flag or the file.
TrainOptions resolve_train_options(const std::string& preset, const std::string& config_file,
                                   const std::map<std::string, std::string>& flags);

// Throws Error naming the first unusable value.
void validate(const TrainOptions& options);

// lr_decay "auto" (cpu-hour's) becomes "linear" where the run has an end to decay to (max_steps
// above warmup_steps, or a time budget without max_steps) and "inverse_sqrt" where it has none;
// the other values stay. attn train resolves it before anything else, so config.json and the
// checkpoints hold the decay the run used. Returns why, for the log ("" where nothing changed).
std::string resolve_lr_decay(TrainOptions& options);

}  // namespace attn
