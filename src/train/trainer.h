#pragma once
// `attn train`: the paper's training loop on a real corpus, made trustworthy: gradient
// accumulation, the warmup/inverse-square-root schedule, validation with early stopping,
// checkpoints by steps and by time that survive a kill at any moment, exact resumption.
//
// The run folder:
//   config.json             the effective options
//   train.jsonl             one record per progress line and per validation
//   checkpoints/step-N.safetensors   the last keep_checkpoints checkpoints
//   best/                   the model with the best dev loss (model.safetensors, config.json, vocab.model)
//   model/                  the model at the end of training (same files)
//   cache/                  token ids of the corpus
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>

#include "train/checkpoint.h"
#include "train/train_options.h"

namespace attn {

struct TrainResult {
  TrainingProgress progress;
  std::string stop_reason;  // "max_steps", "max_epochs", "time_budget", "early_stopping", "interrupted"
};

class Trainer {
 public:
  // Progress lines and messages go to `log` (stderr in the CLI).
  Trainer(TrainOptions options, std::ostream& log);
  // resume: continue from the newest valid checkpoint of run_dir (an error if there is none).
  // Without resume, a run_dir that already holds checkpoints is an error: nothing is overwritten.
  TrainResult run(bool resume);

 private:
  TrainOptions options_;
  std::ostream& log_;
};

}  // namespace attn
