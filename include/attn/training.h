#pragma once
// Training in the calling process (`attn train`; docs/commands.md): options as a JSON object with
// `attn train`'s keys (docs/config.md, `attn train --dump-config`), progress as it is logged, and
// a clean stop (a checkpoint, then return) from the progress callback or from any thread.
#include <cstdint>
#include <functional>
#include <string>

#include "attn/error.h"

namespace attn {

// One record of the run's train.jsonl, as it is written.
struct TrainingEvent {
  std::string type;              // "train": progress over the last log_every updates; "valid": a validation
  std::int64_t step = 0;         // updates so far
  int epoch = 0;                 // from 1 ("train" records)
  double loss = 0;               // "train": mean label-smoothed loss; "valid": dev cross-entropy (nats per token)
  double perplexity = 0;         // "train": of the training batches; "valid": of the dev set
  double learning_rate = 0;      // "train"
  double tokens_per_second = 0;  // "train"
  double elapsed_seconds = 0;    // training time so far
  std::string json;              // the whole record (every field of train.jsonl: docs/commands.md)
};

struct TrainingSummary {
  std::int64_t steps = 0;
  int epochs = 0;  // epochs begun (from 1)
  // "max_steps", "max_epochs", "time_budget", "early_stopping", "lr_decay_end" or "interrupted"
  // (a stop asked for: resume with resume = true).
  std::string stop_reason;
  std::string model_directory;  // run_dir/model: the model at the end
  double best_valid_loss = 0;   // the dev cross-entropy of run_dir/best (0 without a dev set)
};

// Called after each record; return false to stop after this update, with a checkpoint.
using TrainingCallback = std::function<bool(const TrainingEvent&)>;

// Trains as `attn train --config FILE` would with `options_json` as FILE (errors name "options"
// and the key). resume: continue run_dir's newest checkpoint, as `--resume`. Messages (progress
// lines, notes) go to stderr as the command prints them unless quiet. Not reentrant: one training
// at a time per process.
TrainingSummary train(const std::string& options_json, const TrainingCallback& progress = {}, bool resume = false,
                      bool quiet = false);

// Asks the training in progress (if any) to stop after its current update, with a checkpoint.
// Safe from any thread and from a signal handler.
void request_training_stop();

}  // namespace attn
