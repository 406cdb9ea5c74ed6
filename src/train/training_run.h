#pragma once
// One run of `attn train` (train/trainer.h): the class behind Trainer::run, shared by its setup
// (training_run_setup.cpp) and its loop (trainer.cpp). Not a public header.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/batcher.h"
#include "data/bpe_dropout.h"
#include "data/parallel_corpus.h"
#include "data/vocabulary.h"
#include "decode/model_directory.h"
#include "kernels/device_buffer.h"
#include "model/transformer.h"
#include "train/adam_optimizer.h"
#include "train/learning_rate.h"
#include "train/train_log.h"
#include "train/trainer.h"
#include "train/lookup_gradient_sum.h"
#include "train/training_faults.h"
#include "train/validation.h"

namespace attn {

using Clock = std::chrono::steady_clock;

// One run of the training loop: setup in the constructor, then stop_reason() / update() /
// after_update() until stop_reason() names one, then finish().
class Trainer::Run {
 public:
  // The setup (training_run_setup.cpp): the run folder, threads, the ranks' agreement on the job,
  // data, model and optimizer fresh or from a checkpoint, shared by rank 0 with the others.
  // `faults`: what a test asked for (TrainingFaults::from_environment); its clock starts when the setup ends.
  Run(TrainOptions& o, std::ostream& log, dist::Communicator& ranks, const TrainingFaults& faults, bool resume,
      bool accept_changes);
  // Agrees with the other ranks on what depends on signals and rank 0's clock (time budget,
  // checkpoints by time, snapshots), does the saving that asks for, and returns why to stop, or "".
  std::string stop_reason();
  // One optimizer update over the global batch (trainer.cpp: the steps below, in order); false when
  // there was no batch left (the epoch limit fell exactly at an update's boundary): nothing was trained.
  bool update();
  void after_update();  // progress line, validation, checkpoints by steps
  TrainResult finish(std::string stop_reason);
  Trainer::RecordListener on_record;  // rank 0: called with each record of train.jsonl

 private:
  // The setup's steps, in the constructor's order (training_run_setup.cpp).
  std::vector<std::filesystem::path> check_run_folder(bool resume);  // the checkpoints it holds
  void set_threads();
  void agree_on_the_job();  // several ranks: the same options and data on each
  void load_data();
  void create_model();
  void resume_from(const std::vector<std::filesystem::path>& checkpoints, bool accept_changes);  // rank 0
  void start_fresh();                                                                            // rank 0
  void share_rank0_state();  // the other ranks receive rank 0's weights, moments and progress
  void prepare_loop();       // config.json, train.jsonl, the schedule, the epoch's batches
  // The batches of epoch progress_.epoch; with BPE-dropout in that epoch, of the text cut anew.
  void start_epoch();
  const data::Batcher& batcher() const { return epoch_batcher_ ? *epoch_batcher_ : *batcher_; }

  // The steps of one update, in update()'s order (trainer.cpp).
  struct GlobalBatch {
    std::int64_t target_tokens = 0;  // of all its batches, every rank's: the gradient is averaged over them
    int batches = 0;                 // ranks x accumulate, fewer where the epoch limit falls inside it
    int first_mine = 0, mine = 0;    // this rank's share: its first slot, and how many of batches_ it filled
  };
  GlobalBatch gather_global_batch();  // this rank's share into batches_; the epoch may change inside
  bool next_epoch();                  // false: the epoch limit is reached
  double accumulate_gradients(const GlobalBatch& batch);  // returns this rank's share of the loss sum
  void sum_across_ranks(double& loss);                    // gradients and loss: the sums over all ranks
  float clip_scale(double loss_per_token);                // stops a diverging run; the clip's scale
  void count_update(std::int64_t target_tokens);
  // The step's time split across ranks (trainer.cpp): communication counted since `since`; the
  // update's compute ends where a rank arrives at its blocking sum; the split of each update.
  void count_comm(Clock::time_point since);
  void arrive_at_sum();
  void time_split(std::span<const double> computed);

  bool leader() const { return ranks_.rank() == 0; }
  dist::WirePrecision wire() const {
    return o_.allreduce_precision == "bf16" ? dist::WirePrecision::bf16 : dist::WirePrecision::fp32;
  }
  // Training time so far (ATTN_TEST_FAULTS may have the clock count faster, or count updates).
  double elapsed() const { return clock_->elapsed(progress_.step); }
  void save();
  void save_snapshot(int minute);  // rank 0: snapshots/minute-MMM, unless there already
  void check_ranks_agree_on_weights();
  void check_divergence(double gradient_norm, double loss_per_token) const;
  // lr_decay linear without max_steps: the line falls to 0 where the time budget is estimated to end.
  bool decays_to_the_clock() const {
    return o_.lr_decay == "linear" && o_.max_steps == 0 && o_.time_budget_minutes > 0;
  }
  void estimate_decay_end();
  // The line the learning rate falls along: under a time budget the one progress_ keeps (and the
  // checkpoints), re-estimated as the run goes; with max_steps the fixed one to max_steps.
  const DecayLine& decay_line() const { return decays_to_the_clock() ? progress_.decay : fixed_decay_; }
  // A model folder's metadata: `entries` and the languages the run was told.
  // With a moving average of the weights, its decay: the folder holds the average.
  std::map<std::string, std::string> model_metadata(std::map<std::string, std::string> entries) const {
    add_languages(entries, {o_.source_lang, o_.target_lang});
    if (o_.ema_decay > 0) {
      char decay[32];
      std::snprintf(decay, sizeof decay, "%.10g", o_.ema_decay);
      entries["ema_decay"] = decay;
    }
    return entries;
  }
  void emit(const TrainLogRecord& record) {  // rank 0: a record of train.jsonl
    const std::string line = record_json(record).dump();
    jsonl_ << line << std::endl;
    if (on_record) on_record(record, line);
  }

  TrainOptions& o_;
  const TrainingFaults faults_;
  std::unique_ptr<TrainingClock> clock_;  // started when the setup ends
  dist::Communicator& ranks_;
  std::ostream silent_{nullptr};
  std::ostream& log_;  // rank 0: the caller's log; other ranks: silent_
  std::filesystem::path run_, checkpoints_;
  std::optional<data::Vocabulary> vocabulary_;
  std::unique_ptr<data::ParallelCorpus> corpus_;
  std::unique_ptr<data::Batcher> batcher_;
  std::optional<data::BpeDropout> bpe_dropout_;         // with bpe_dropout > 0
  std::unique_ptr<data::ParallelCorpus> epoch_corpus_;  // this epoch's pieces, with BPE-dropout
  std::unique_ptr<data::Batcher> epoch_batcher_;        // its batcher
  std::unique_ptr<Validation> validation_;              // rank 0
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<AdamOptimizer> adam_;
  TrainingProgress progress_;
  std::ofstream jsonl_;  // rank 0
  nlohmann::json options_json_;
  LearningRateSchedule schedule_{};
  DecayLine fixed_decay_{};  // lr_decay linear with max_steps: to 0 at max_steps; otherwise none
  data::EpochBatches epoch_;
  std::vector<data::Batch> batches_;            // this rank's share of one update
  DeviceBuffer<float> gradient_sum_;            // the earlier batches' gradient while the next one's is computed
  std::unique_ptr<LookupGradientSum> lookups_;  // the embedding lookups' gradient, summed apart
  Clock::time_point last_save_ = Clock::now(), window_start_ = Clock::now();
  double start_elapsed_ = 0;  // training time of earlier runs (from the checkpoint)
  std::int64_t first_step_ = 0;
  double lr_ = 0;
  // Progress window for the live line; loss sums are this rank's, tokens the global batch's.
  double window_loss_ = 0, window_nll_ = 0, window_comm_ = 0;
  // With several ranks, the window's communication that no rank's compute hid, and the ranks' mean
  // wait for the slowest rank's compute (trainer.cpp, time_split); from stop_reason's sum, this
  // update's: this rank's time in sums and its compute before the blocking sum.
  double window_unhidden_ = 0, window_waiting_ = 0;
  Clock::time_point synced_ = Clock::now();
  double comm_since_sync_ = 0, computed_ = 0;
  std::int64_t window_tokens_ = 0;
};

}  // namespace attn
