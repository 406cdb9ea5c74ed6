#include "train/trainer.h"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/clock_text.h"
#include "core/error.h"
#include "core/seed.h"
#include "core/text_file.h"
#include "data/batcher.h"
#include "data/parallel_corpus.h"
#include "decode/model_directory.h"
#include "train/learning_rate.h"
#include "train/snapshot_schedule.h"
#include "train/validation.h"

namespace attn {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs SIGINT/SIGTERM handlers for the lifetime of a run: the loop finishes its step, writes
// a checkpoint and returns.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    old_int_ = std::signal(SIGINT, on_stop_signal);
    old_term_ = std::signal(SIGTERM, on_stop_signal);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

TokenBatch view_of(const data::Batch& b) {
  return {static_cast<int>(b.batch_size), static_cast<int>(b.source_length), static_cast<int>(b.target_length),
          b.src.data(), b.src_len.data(), b.tgt_in.data(), b.tgt_out.data(), b.tgt_len.data()};
}

// Keeps the records of train.jsonl up to `step`: a resumed run rewrites what came after its
// checkpoint, so the log never shows steps twice.
void truncate_log(const std::filesystem::path& path, std::int64_t step) {
  if (!std::filesystem::exists(path)) return;
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      if (nlohmann::json::parse(line).value("step", std::int64_t{0}) > step) continue;
    } catch (const nlohmann::json::exception&) {
      continue;  // a record torn by the kill
    }
    kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

}  // namespace

Trainer::Trainer(TrainOptions options, std::ostream& log) : options_(std::move(options)), log_(log) {}

TrainResult Trainer::run(bool resume) {
  TrainOptions& o = options_;
  validate(o);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  const std::filesystem::path run = o.run_dir;
  const std::filesystem::path checkpoints = run / "checkpoints";
  std::filesystem::create_directories(checkpoints);
  const auto existing = list_checkpoints(checkpoints);
  if (!resume && !existing.empty())
    throw Error("run folder " + run.string() + " already holds checkpoints (" + existing.back().filename().string() +
                "): continue it with --resume, or choose another --run-dir");
  if (resume && existing.empty()) throw Error("--resume: no checkpoint in " + checkpoints.string());

  // Data.
  const data::Vocabulary vocabulary = data::Vocabulary::load(o.vocabulary);
  o.model.vocab_size = vocabulary.size();
  data::ParallelCorpusOptions corpus_options;
  corpus_options.source_file = o.train_source;
  corpus_options.target_file = o.train_target;
  corpus_options.cache_dir = run / "cache";
  corpus_options.max_tokens = static_cast<std::size_t>(o.max_length);
  corpus_options.log = &log_;
  const data::ParallelCorpus corpus = data::ParallelCorpus::load(vocabulary, corpus_options);
  if (corpus.size() == 0) throw Error("no usable sentence pairs in " + o.train_source + " / " + o.train_target);
  const data::Batcher batcher(corpus, {static_cast<std::size_t>(o.batch_tokens), o.seed});
  std::unique_ptr<Validation> validation;
  if (!o.valid_source.empty()) validation = std::make_unique<Validation>(o, vocabulary, run / "cache", log_);

  // Model and optimizer, fresh or from the newest checkpoint that loads.
  Transformer model(o.model, cpu_backend(parse_matmul_precision(o.precision)));
  AdamOptimizer adam(model, {o.adam_beta1, o.adam_beta2, o.adam_eps});
  TrainingProgress progress;
  if (resume) {
    bool loaded = false;
    for (auto it = existing.rbegin(); it != existing.rend() && !loaded; ++it) {
      try {
        progress = load_checkpoint(*it, model, &adam).progress;
        log_ << "resuming from " << it->string() << " (step " << progress.step << ", epoch " << progress.epoch + 1 << ")\n";
        loaded = true;
      } catch (const Error& e) {
        log_ << "warning: " << e.what() << "; trying an older checkpoint\n";
      }
    }
    if (!loaded) throw Error("--resume: no checkpoint in " + checkpoints.string() + " could be loaded");
  } else {
    model.initialize(o.seed);
    log_ << "model: " << model.parameter_count() << " parameters (" << nlohmann::json(o.model).dump() << "), "
         << o.precision << " matrix products\n";
  }
  write_file_atomic(run / "config.json", options_to_json(o).dump(2) + "\n");
  truncate_log(run / "train.jsonl", progress.step);
  std::ofstream jsonl(run / "train.jsonl", std::ios::app);

  const LearningRateSchedule schedule{o.model.d_model, o.warmup_steps, o.lr_scale};
  const nlohmann::json options_json = options_to_json(o);
  StopSignals signals;
  const auto started = Clock::now();
  // Training time of earlier runs (from the checkpoint) plus this run's.
  const double start_elapsed = progress.elapsed_seconds;
  auto elapsed = [&] { return start_elapsed + std::chrono::duration<double>(Clock::now() - started).count(); };
  auto last_save = Clock::now();

  auto save = [&] {
    progress.elapsed_seconds = elapsed();
    save_checkpoint(checkpoint_path(checkpoints, progress.step), model, adam, progress, options_json);
    auto all = list_checkpoints(checkpoints);
    for (std::size_t i = 0; i + static_cast<std::size_t>(o.keep_checkpoints) < all.size(); ++i)
      std::filesystem::remove(all[i]);
    last_save = Clock::now();
  };

  data::EpochBatches epoch = batcher.epoch(static_cast<std::uint64_t>(progress.epoch));
  std::vector<data::Batch> batches(static_cast<std::size_t>(o.accumulate));
  // Progress window for the live line.
  double window_loss = 0, window_nll = 0;
  std::int64_t window_tokens = 0, window_steps = 0;
  auto window_start = Clock::now();
  const std::int64_t first_step = progress.step;
  TrainResult result;

  while (true) {
    // Stopping conditions, checked between updates.
    if (g_stop_signal) result.stop_reason = "interrupted";
    else if (o.max_steps > 0 && progress.step >= o.max_steps) result.stop_reason = "max_steps";
    else if (o.time_budget_minutes > 0 && elapsed() >= o.time_budget_minutes * 60) result.stop_reason = "time_budget";
    else if (o.max_epochs > 0 && progress.epoch >= o.max_epochs) result.stop_reason = "max_epochs";
    else if (o.early_stopping > 0 && progress.validations_without_improvement >= o.early_stopping)
      result.stop_reason = "early_stopping";
    if (!result.stop_reason.empty()) break;

    // One update: `accumulate` batches, the gradient averaged over all their target tokens.
    std::int64_t update_tokens = 0;
    int used = 0;
    for (auto& b : batches) {
      if (progress.next_batch >= static_cast<std::int64_t>(epoch.size())) {
        ++progress.epoch;
        progress.next_batch = 0;
        if (o.max_epochs > 0 && progress.epoch >= o.max_epochs) break;
        epoch = batcher.epoch(static_cast<std::uint64_t>(progress.epoch));
      }
      batcher.fill(epoch.pairs(static_cast<std::size_t>(progress.next_batch++)), b);
      update_tokens += static_cast<std::int64_t>(b.target_tokens);
      ++used;
    }
    if (used == 0) continue;  // the epoch limit was reached exactly at a boundary
    model.zero_gradients();
    for (int i = 0; i < used; ++i) {
      const nn::Dropout dropout{o.model.dropout, derive_seed(o.seed, static_cast<std::uint64_t>(progress.step) * 1024 + i)};
      const LossSums s = model.forward_backward(view_of(batches[i]), dropout, 1.0f / static_cast<float>(update_tokens));
      window_loss += s.loss;
      window_nll += s.nll;
    }
    float grad_scale = 1.0f;
    if (o.clip_norm > 0) {
      const double norm = std::sqrt(model.backend().sum_squares(model.gradients(), model.parameter_count()));
      if (norm > o.clip_norm) grad_scale = static_cast<float>(o.clip_norm / norm);
    }
    const double lr = schedule(progress.step + 1);
    adam.step(static_cast<float>(lr), grad_scale);
    ++progress.step;
    progress.target_tokens += update_tokens;
    window_tokens += update_tokens;
    ++window_steps;

    if (progress.step % o.log_every == 0) {
      const double secs = std::chrono::duration<double>(Clock::now() - window_start).count();
      const double loss = window_loss / static_cast<double>(window_tokens);
      const double ppl = std::exp(window_nll / static_cast<double>(window_tokens));
      const double tps = static_cast<double>(window_tokens) / secs;
      const double now = elapsed();
      // ETA: the nearest of the limits that are set.
      double eta = -1;
      const double rate = static_cast<double>(progress.step - first_step) / std::max(1e-9, now - start_elapsed);
      if (o.time_budget_minutes > 0) eta = o.time_budget_minutes * 60 - now;
      if (o.max_steps > 0) {
        const double by_steps = static_cast<double>(o.max_steps - progress.step) / std::max(rate, 1e-9);
        eta = eta < 0 ? by_steps : std::min(eta, by_steps);
      }
      char line[256];
      std::snprintf(line, sizeof line, "step %7lld | epoch %3lld | loss %.4f | ppl %8.2f | lr %.3e | %6.0f tok/s | %s%s%s",
                    static_cast<long long>(progress.step), static_cast<long long>(progress.epoch + 1), loss, ppl, lr,
                    tps, clock_text(now).c_str(), eta >= 0 ? " | ETA " : "", eta >= 0 ? clock_text(eta).c_str() : "");
      log_ << line << std::endl;
      jsonl << nlohmann::json{{"type", "train"}, {"step", progress.step}, {"epoch", progress.epoch + 1},
                              {"loss", loss}, {"ppl", ppl}, {"lr", lr}, {"tokens_per_second", tps},
                              {"target_tokens", progress.target_tokens}, {"elapsed_seconds", now}}
                   .dump()
            << std::endl;
      window_loss = window_nll = 0;
      window_tokens = window_steps = 0;
      window_start = Clock::now();
    }

    if (validation && progress.step % o.valid_every == 0) {
      const ValidationResult v = validation->run(model);
      const bool best = v.cross_entropy < progress.best_valid_loss;
      if (best) {
        progress.best_valid_loss = v.cross_entropy;
        progress.best_step = progress.step;
        progress.validations_without_improvement = 0;
        save_model_directory(run / "best", model, vocabulary, {{"step", std::to_string(progress.step)}});
      } else {
        ++progress.validations_without_improvement;
      }
      log_ << "valid step " << progress.step << " | " << v.summary() << (best ? " | new best" : "") << std::endl;
      nlohmann::json record = v.to_json();
      record["type"] = "valid";
      record["step"] = progress.step;
      record["best"] = best;
      record["elapsed_seconds"] = elapsed();
      jsonl << record.dump() << std::endl;
      window_start = Clock::now();  // validation time is not training throughput
    }
    if (const int minute = snapshot_minute(elapsed(), o.snapshot_every_minutes); minute > 0) {
      const auto folder = run / "snapshots" / snapshot_name(minute);
      if (!std::filesystem::exists(folder))
        save_model_directory(folder, model, vocabulary, {{"step", std::to_string(progress.step)},
                                                         {"minutes", std::to_string(minute)}});
    }
    const bool by_steps = o.save_every > 0 && progress.step % o.save_every == 0;
    const bool by_time = o.save_every_minutes > 0 &&
                         std::chrono::duration<double>(Clock::now() - last_save).count() >= o.save_every_minutes * 60;
    if (by_steps || by_time) save();
  }
  save();
  save_model_directory(run / "model", model, vocabulary, {{"step", std::to_string(progress.step)}});
  log_ << "training stopped (" << result.stop_reason << ") at step " << progress.step << ", epoch " << progress.epoch + 1
       << ", after " << clock_text(progress.elapsed_seconds) << "; checkpoint " << checkpoint_path(checkpoints, progress.step).string()
       << std::endl;
  result.progress = progress;
  return result;
}

}  // namespace attn
