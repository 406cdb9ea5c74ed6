#pragma once
// train.jsonl, the run folder's log: one JSON object a line, a "train" record per progress line and a
// "valid" record per validation (docs/commands.md). Its keys are written and read here alone.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn {

// A progress record: the log_every updates up to `step`.
struct TrainRecord {
  std::int64_t step = 0;
  std::int64_t epoch = 0;                    // of the update's last batch, counted from 1
  double loss = 0;                           // label-smoothed, per target token, over the updates since the last record
  double ppl = 0;                            // exp of their negative log-likelihood per target token
  double lr = 0;                             // the learning rate of update `step`
  double tokens_per_second = 0;              // target tokens of the global batches, per second since the last record
  std::int64_t target_tokens = 0;            // trained on so far
  double elapsed_seconds = 0;                // training time so far
  std::optional<std::int64_t> lr_decay_end;  // lr_decay linear to a time budget: the end lr was on the way to
  std::optional<int> ranks;                  // with several ranks: how many,
  std::optional<double> allreduce_seconds;   // and the seconds since the last record spent summing gradients,
  std::optional<double> communication_seconds;  // of which communication no rank's compute hid,
  std::optional<double> waiting_seconds;        // and the ranks' mean wait for the slowest rank's compute
};

// A validation record (train/validation.h).
struct ValidRecord {
  std::int64_t step = 0;
  double loss = 0;                   // label-smoothed, per target token
  double cross_entropy = 0;          // nats per target token
  double ppl = 0;                    // exp(cross_entropy)
  std::int64_t tokens = 0;           // target tokens of the dev set
  double seconds = 0;                // the validation's time
  std::optional<double> bleu, chrf;  // of greedy translations of the first dev sentences, where asked
  std::optional<int> translated;     // how many were translated
  bool best = false;                 // the best dev cross-entropy so far
  std::optional<double> ema_decay;   // with a moving average of the weights (the average was validated)
  double elapsed_seconds = 0;        // training time so far
};

using TrainLogRecord = std::variant<TrainRecord, ValidRecord>;

// One line of train.jsonl, with its "type".
nlohmann::json record_json(const TrainLogRecord& record);
void to_json(nlohmann::json& j, const TrainRecord& r);
void to_json(nlohmann::json& j, const ValidRecord& r);
// Keys absent (or not numbers) leave the field at its default; the reader below checks those a
// record cannot do without.
void from_json(const nlohmann::json& j, TrainRecord& r);
void from_json(const nlohmann::json& j, ValidRecord& r);

// train.jsonl's records, by type, in file order.
struct TrainingLog {
  std::vector<TrainRecord> train;
  std::vector<ValidRecord> valid;
  bool torn_last_line = false;  // an unfinished last record was left out
};

// Reads train.jsonl. A line that is not a JSON object, or a record whose step, loss,
// cross-entropy, speed or time is missing or not a number (or whose BLEU, epoch or token count is
// not one), throws attn::Error naming the file and line; blank lines are skipped. The one
// exception: a last line that is not JSON and has no line end (a run killed while writing it) is
// left out, and torn_last_line says so.
TrainingLog read_training_log(const std::filesystem::path& path);

// Keeps the records of train.jsonl up to `step` (and drops torn ones): a resumed run rewrites what
// came after its checkpoint, so the log never shows steps twice. Nothing to do for a missing file.
void truncate_training_log(const std::filesystem::path& path, std::int64_t step);

}  // namespace attn
