#pragma once
// Training checkpoints: one safetensors file holding the model's tensors (under their usual
// names, so a checkpoint loads like a model), Adam's moment estimates ("optimizer.adam.m" and
// "optimizer.adam.v", flat in parameter-layout order), the moving average of the weights where the
// run keeps one ("optimizer.ema", the same layout), and in its metadata the training
// progress, the configuration and a SHA-256 of the data section. Written atomically; a file
// whose checksum does not match is refused, so a torn or corrupted write never passes as a
// checkpoint.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "model/transformer.h"
#include "train/adam_optimizer.h"
#include "train/learning_rate.h"

namespace attn {

// Everything besides the weights that a resumed run needs to continue exactly.
struct TrainingProgress {
  std::int64_t step = 0;           // optimizer updates done
  std::int64_t epoch = 0;          // epoch of the next batch
  std::int64_t next_batch = 0;     // index of the next batch within that epoch's order
  std::int64_t target_tokens = 0;  // target tokens trained on so far
  double elapsed_seconds = 0;      // training time before this run
  double best_valid_loss = 1e300;  // best validation cross-entropy so far
  std::int64_t best_step = 0;
  int validations_without_improvement = 0;
  int ranks = 1;  // processes of the run that wrote it (the global batch is
                  // batch_tokens x ranks x accumulate)
  // lr_decay linear under a time budget: the line to the update at which the learning rate reaches 0,
  // estimated at the end of the warmup (end 0: not yet) and again as the run goes. In the checkpoint
  // as decay_end, decay_from and decay_from_fraction.
  DecayLine decay;
};

void to_json(nlohmann::json& j, const TrainingProgress& p);
void from_json(const nlohmann::json& j, TrainingProgress& p);

struct CheckpointContents {
  TrainingProgress progress;
  nlohmann::json options;  // the training options the run used
  ModelConfig model_config;
  bool had_average = false;  // the file holds a moving average of the weights (read only with an optimizer)
};

void save_checkpoint(const std::filesystem::path& path, const Transformer& model, AdamOptimizer& optimizer,
                     const TrainingProgress& progress, const nlohmann::json& options);

// Reads the file, verifies its checksum and that it fits the model, then loads the weights (and
// the optimizer state if one is given: its moving average too where it keeps one, started from
// the loaded weights when the file holds none). Throws Error naming the file on any problem; on error
// nothing has been changed.
CheckpointContents load_checkpoint(const std::filesystem::path& path, Transformer& model, AdamOptimizer* optimizer);

// Reads only the configuration and progress (verifying the checksum).
CheckpointContents inspect_checkpoint(const std::filesystem::path& path);

// The checkpoints of a run folder ("step-<8 or more digits>.safetensors"), oldest (fewest updates) first.
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir);
std::filesystem::path checkpoint_path(const std::filesystem::path& dir, std::int64_t step);

// The update a checkpoint was written after, from its file name ("step-00001234.safetensors": 1234).
// Throws Error naming the file when the name is not a checkpoint's.
std::int64_t checkpoint_step(const std::filesystem::path& path);

// The progress saved in the newest checkpoint of a run folder's checkpoints/ (where the run
// stopped, to the update: train.jsonl has a record only every log_every updates); none without one.
// Throws Error naming the file when it is not a sound checkpoint.
std::optional<TrainingProgress> last_checkpoint_progress(const std::filesystem::path& dir);

// Element-wise mean of the model weights of several checkpoints (or model files) with the same
// configuration, in parameter-layout order.
std::vector<float> average_weights(const std::vector<std::filesystem::path>& paths, const ModelConfig& config);

}  // namespace attn
