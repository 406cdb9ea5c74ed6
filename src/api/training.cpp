// The public train() (include/attn/training.h) over the train floor: `attn train --config` in the
// calling process, with train.jsonl's records handed to a callback.
#include "attn/training.h"

#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>
#include <variant>

#include <nlohmann/json.hpp>

#include "api/argument_errors.h"
#include "train/stop_signals.h"
#include "train/train_log.h"
#include "train/trainer.h"

namespace attn {
namespace {

std::mutex g_training;  // one training at a time: the stop request is the process's

TrainingEvent event_of(const TrainLogRecord& record, const std::string& line) {
  TrainingEvent e;
  e.json = line;
  if (const auto* t = std::get_if<TrainRecord>(&record)) {
    e.type = "train";
    e.step = t->step;
    e.epoch = static_cast<int>(t->epoch);
    e.loss = t->loss;
    e.perplexity = t->ppl;
    e.learning_rate = t->lr;
    e.tokens_per_second = t->tokens_per_second;
    e.elapsed_seconds = t->elapsed_seconds;
  } else {
    const auto& v = std::get<ValidRecord>(record);
    e.type = "valid";
    e.step = v.step;
    e.loss = v.cross_entropy;  // the dev loss the best model and early stopping go by
    e.perplexity = v.ppl;
    e.elapsed_seconds = v.elapsed_seconds;
  }
  return e;
}

}  // namespace

void request_training_stop() { request_stop(); }

TrainingSummary train(const std::string& options_json, const TrainingCallback& progress, bool resume, bool quiet) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(options_json);
  } catch (const nlohmann::json::parse_error& e) {
    api::invalid(std::string("options: not JSON: ") + e.what());
  }
  if (!j.is_object()) api::invalid("options: expected a JSON object of attn train's options");
  TrainOptions options;
  api::as_argument_error([&] {
    apply_options_json(j, options, "options");
    validate(options);
  });

  const std::unique_lock<std::mutex> one(g_training, std::try_to_lock);
  if (!one.owns_lock()) throw Error("train: another training is running in this process");
  clear_stop_request();
  std::ostringstream discard;
  Trainer trainer(options, quiet ? static_cast<std::ostream&>(discard) : std::cerr);
  if (progress)
    trainer.on_record([&progress](const TrainLogRecord& record, const std::string& line) {
      if (!progress(event_of(record, line))) request_stop();
    });
  const TrainResult r = trainer.run(resume);
  clear_stop_request();
  TrainingSummary s;
  s.steps = r.progress.step;
  s.epochs = static_cast<int>(r.progress.next_batch > 0 ? r.progress.epoch + 1 : r.progress.epoch);
  s.stop_reason = r.stop_reason;
  s.model_directory = (std::filesystem::path(options.run_dir) / "model").string();
  s.best_valid_loss = options.valid_source.empty() ? 0 : r.progress.best_valid_loss;
  return s;
}

}  // namespace attn
