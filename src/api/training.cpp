// The public train() (include/attn/training.h) over the train floor: `attn train --config` in the
// calling process, with train.jsonl's records handed to a callback.
#include "attn/training.h"

#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "api/argument_errors.h"
#include "train/stop_signals.h"
#include "train/trainer.h"

namespace attn {
namespace {

std::mutex g_training;  // one training at a time: the stop request is the process's

TrainingEvent event_of(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line);
  TrainingEvent e;
  e.json = line;
  e.type = j.value("type", "");
  e.step = j.value("step", std::int64_t{0});
  e.epoch = j.value("epoch", 0);
  e.loss = e.type == "valid" ? j.value("cross_entropy", 0.0) : j.value("loss", 0.0);
  e.perplexity = j.value("ppl", 0.0);
  e.learning_rate = j.value("lr", 0.0);
  e.tokens_per_second = j.value("tokens_per_second", 0.0);
  e.elapsed_seconds = j.value("elapsed_seconds", 0.0);
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
    trainer.on_record([&progress](const std::string& line) {
      if (!progress(event_of(line))) request_stop();
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
