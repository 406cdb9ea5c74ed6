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
//
// Under mpirun, N processes (ranks) train one model by synchronous data parallelism: each update
// takes N x accumulate consecutive batches of the epoch's order, rank r trains batches
// [r x accumulate, (r+1) x accumulate) of them, the gradients are summed over the ranks, and every
// rank applies the same Adam update. Rank 0 alone reads and writes the run folder (checkpoints,
// logs, models, validation) and decides what depends on the clock; the others follow.
//
// Stop requests (Ctrl-C, SIGTERM, SIGUSR1) reach a run through train/stop_signals.h, which
// `attn train` sets up before any thread starts.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "train/checkpoint.h"
#include "train/dist/communicator.h"
#include "train/train_log.h"
#include "train/train_options.h"

namespace attn {

struct TrainResult {
  TrainingProgress progress;
  std::string stop_reason;  // "max_steps", "max_epochs", "time_budget", "lr_decay_end", "early_stopping", "interrupted"
};

class Trainer {
 public:
  // Progress lines and messages go to `log` (stderr in the CLI); on ranks other than 0 they are
  // dropped. Without a communicator, one process trains alone.
  Trainer(TrainOptions options, std::ostream& log);
  Trainer(TrainOptions options, std::ostream& log, dist::Communicator& ranks);
  ~Trainer();
  // resume: continue from the newest valid checkpoint of run_dir (an error if there is none). An
  // error too if the checkpoint was trained with other options that shape the run (data,
  // batches, seed, schedule, model: all but where/how often to write, when to stop, threads),
  // listing them, unless accept_changes.
  // Without resume, a run_dir that already holds checkpoints is an error: nothing is overwritten.
  // With several ranks, every rank calls run(); setup problems (different configurations or data
  // on different ranks, a rank that cannot read its files) throw dist::JobError on every rank.
  TrainResult run(bool resume, bool accept_changes = false);

  // Called on rank 0, on the training thread, with each record of train.jsonl (train/train_log.h) and
  // its line of JSON (docs/commands.md) after it is written.
  using RecordListener = std::function<void(const TrainLogRecord& record, const std::string& line)>;
  void on_record(RecordListener listener) { on_record_ = std::move(listener); }

 private:
  class Run;  // one run: its setup, one update, and what follows an update
  TrainOptions options_;
  std::ostream& log_;
  std::unique_ptr<dist::Communicator> own_ranks_;
  dist::Communicator* ranks_;
  RecordListener on_record_;
};

}  // namespace attn
