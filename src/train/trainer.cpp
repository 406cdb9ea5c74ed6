#include "train/trainer.h"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/clock_text.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/seed.h"
#include "core/sha256.h"
#include "core/text_file.h"
#include "data/batcher.h"
#include "data/parallel_corpus.h"
#include "decode/model_directory.h"
#include "train/learning_rate.h"
#include "train/snapshot_schedule.h"
#include "train/stop_signals.h"
#include "train/validation.h"

namespace attn {
namespace {

using Clock = std::chrono::steady_clock;

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

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_in(path, "cannot open");
  Sha256 hash;
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    hash.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw_in(path, "read failed");
  return to_hex(hash.finish());
}

// What must be the same on every rank: the options (but not where each rank finds its files,
// nor its thread count) and the contents of the data files.
nlohmann::json job_fingerprint(const TrainOptions& o) {
  nlohmann::json j = options_to_json(o);
  for (const char* key : {"train_source", "train_target", "valid_source", "valid_target", "vocabulary"}) {
    const std::string path = j.at(key);
    j.erase(key);
    if (!path.empty()) j[std::string("contents of ") + key + " (sha256)"] = file_sha256(path);
  }
  j.erase("run_dir");
  j.erase("threads");
  return j;
}

// "rank 1 differs from rank 0: batch_tokens is 512 on rank 1, 1024 on rank 0; ..." or "".
std::string fingerprint_differences(const std::vector<std::string>& all) {
  const nlohmann::json first = nlohmann::json::parse(all.at(0));
  std::string text;
  for (std::size_t r = 1; r < all.size(); ++r) {
    const nlohmann::json other = nlohmann::json::parse(all[r]);
    std::string diffs;
    nlohmann::json keys = first;
    keys.update(other);
    for (const auto& [key, unused] : keys.items()) {
      const std::string a = first.contains(key) ? first[key].dump() : "(absent)";
      const std::string b = other.contains(key) ? other[key].dump() : "(absent)";
      if (a != b)
        diffs +=
            (diffs.empty() ? "" : ", ") + key + " is " + b + " on rank " + std::to_string(r) + ", " + a + " on rank 0";
    }
    if (!diffs.empty())
      text += (text.empty() ? "" : "; ") + ("rank " + std::to_string(r) + " differs from rank 0: " + diffs);
  }
  return text;
}

// Threads per rank when the options leave it open: the cores this process may use (mpirun binds
// ranks to cores or sockets, or not at all), divided among the ranks of this node that may use
// the same cores. A collective: every rank calls it.
int default_threads(dist::Communicator& ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  std::string mask(CPU_SETSIZE, '0');
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) mask[static_cast<std::size_t>(c)] = '1';
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string mine = std::string(host) + "\n" + mask;
  const auto all = ranks.gather_all(mine);
  int sharing = 0;
  for (const auto& other : all) {
    if (other.substr(0, other.find('\n')) != host) continue;
    const std::string other_mask = other.substr(other.find('\n') + 1);
    for (std::size_t c = 0; c < mask.size() && c < other_mask.size(); ++c)
      if (mask[c] == '1' && other_mask[c] == '1') {
        ++sharing;
        break;
      }
  }
  return std::max(1, CPU_COUNT(&set) / std::max(1, sharing));
}

// Options a resumed run may change freely: where and how often things are written, when to stop,
// how many threads. Every other option shapes the run (data, batches, order, schedule, model).
bool free_to_change(const std::string& key) {
  static const std::set<std::string> free{"run_dir",
                                          "source_lang",
                                          "target_lang",
                                          "threads",
                                          "max_steps",
                                          "max_epochs",
                                          "time_budget_minutes",
                                          "early_stopping",
                                          "valid_every",
                                          "valid_translate",
                                          "save_every",
                                          "save_every_minutes",
                                          "keep_checkpoints",
                                          "snapshot_every_minutes",
                                          "log_every"};
  return free.count(key) > 0;
}

// "batch_tokens is 1024 now, 512 in the checkpoint; seed ..." for the options that shape the run
// and differ ("" when none does). Keys the checkpoint does not record (older versions) are skipped.
// accumulate may change with the number of ranks: what shapes the run is the batches per update,
// ranks x accumulate, and a new number of ranks is allowed (and told). Under lr_decay "linear",
// max_steps is where the learning rate reaches 0: it shapes the run too.
std::string changed_options(const nlohmann::json& saved, int saved_ranks, const nlohmann::json& now, int ranks) {
  std::string text;
  const bool linear = now.value("lr_decay", "") == "linear";
  for (const auto& [key, value] : now.items()) {
    if ((free_to_change(key) && !(linear && key == "max_steps")) || !saved.contains(key) || saved.at(key) == value)
      continue;
    if (key == "accumulate" &&
        (saved_ranks != ranks || saved.at(key).get<int>() * saved_ranks == value.get<int>() * ranks))
      continue;
    text += (text.empty() ? "" : "; ") + key + " is " + value.dump() + " now, " + saved.at(key).dump() +
            " in the checkpoint";
  }
  return text;
}

// The dropout seed of the batch in `slot` of the global batch of update `step`: the seeds of
// single-process runs for the first 1024 slots, a separate family beyond (more ranks x accumulate
// than that would otherwise reuse the next update's seeds).
std::uint64_t dropout_seed(std::uint64_t seed, std::int64_t step, std::uint64_t slot) {
  if (slot < 1024) return derive_seed(seed, static_cast<std::uint64_t>(step) * 1024 + slot);
  return derive_seed(derive_seed(seed ^ 0x6a09e667f3bcc908ULL, static_cast<std::uint64_t>(step)), slot);
}

}  // namespace

// One run of the training loop: setup in the constructor, then stop_reason() / update() /
// after_update() until stop_reason() names one, then finish().
class Trainer::Run {
 public:
  Run(TrainOptions& o, std::ostream& log, dist::Communicator& ranks, bool resume, bool accept_changes);
  // Agrees with the other ranks on what depends on signals and rank 0's clock (time budget,
  // checkpoints by time, snapshots), does the saving that asks for, and returns why to stop, or "".
  std::string stop_reason();
  // One optimizer update over the global batch; false when there was no batch left (the epoch
  // limit fell exactly at an update's boundary): nothing was trained.
  bool update();
  void after_update();  // progress line, validation, checkpoints by steps
  TrainResult finish(std::string stop_reason);
  Trainer::RecordListener on_record;  // rank 0: called with each record of train.jsonl

 private:
  bool leader() const { return ranks_.rank() == 0; }
  double elapsed() const { return start_elapsed_ + std::chrono::duration<double>(Clock::now() - started_).count(); }
  void save();
  void check_ranks_agree_on_weights();
  void check_divergence(double gradient_norm, double loss_per_token) const;
  void estimate_decay_end();
  // A model folder's metadata: `entries` and the languages the run was told.
  std::map<std::string, std::string> model_metadata(std::map<std::string, std::string> entries) const {
    add_languages(entries, {o_.source_lang, o_.target_lang});
    return entries;
  }
  void emit(const nlohmann::json& record) {  // rank 0: a record of train.jsonl
    const std::string line = record.dump();
    jsonl_ << line << std::endl;
    if (on_record) on_record(line);
  }

  TrainOptions& o_;
  dist::Communicator& ranks_;
  std::ostream silent_{nullptr};
  std::ostream& log_;  // rank 0: the caller's log; other ranks: silent_
  std::filesystem::path run_, checkpoints_;
  std::optional<data::Vocabulary> vocabulary_;
  std::unique_ptr<data::ParallelCorpus> corpus_;
  std::unique_ptr<data::Batcher> batcher_;
  std::unique_ptr<Validation> validation_;  // rank 0
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<AdamOptimizer> adam_;
  TrainingProgress progress_;
  std::ofstream jsonl_;  // rank 0
  nlohmann::json options_json_;
  LearningRateSchedule schedule_{};
  data::EpochBatches epoch_;
  std::vector<data::Batch> batches_;  // this rank's share of one update
  DeviceBuffer<float> gradient_sum_;  // the earlier batches' gradient while the next one's is computed
  Clock::time_point started_ = Clock::now(), last_save_ = Clock::now(), window_start_ = Clock::now();
  double start_elapsed_ = 0;  // training time of earlier runs (from the checkpoint)
  std::int64_t first_step_ = 0;
  double lr_ = 0;
  // Progress window for the live line; loss sums are this rank's, tokens the global batch's.
  double window_loss_ = 0, window_nll_ = 0, window_comm_ = 0;
  std::int64_t window_tokens_ = 0;
};

Trainer::Run::Run(TrainOptions& o, std::ostream& log, dist::Communicator& ranks, bool resume, bool accept_changes)
    : o_(o), ranks_(ranks), log_(ranks.rank() == 0 ? log : silent_) {
  run_ = o.run_dir;
  checkpoints_ = run_ / "checkpoints";
  std::vector<std::filesystem::path> existing;
  dist::on_every_rank(ranks_, [&] {
    validate(o);
    if (leader()) {
      std::filesystem::create_directories(checkpoints_);
      existing = list_checkpoints(checkpoints_);
      if (!resume && !existing.empty())
        throw Error("run folder " + run_.string() + " already holds checkpoints (" +
                    existing.back().filename().string() + "): continue it with --resume, or choose another --run-dir");
      if (resume && existing.empty()) throw Error("--resume: no checkpoint in " + checkpoints_.string());
    }
  });
  const int shared_threads = ranks_.size() > 1 ? default_threads(ranks_) : 0;
  if (o.threads > 0)
    omp_set_num_threads(o.threads);
  else if (ranks_.size() > 1)
    omp_set_num_threads(shared_threads);

  // Every rank must train the same job on the same data.
  if (ranks_.size() > 1) {
    std::string mine;
    dist::on_every_rank(ranks_, [&] { mine = job_fingerprint(o).dump(); });
    if (const std::string diff = fingerprint_differences(ranks_.gather_all(mine)); !diff.empty())
      throw dist::JobError(diff);
  }

  // Data.
  dist::on_every_rank(ranks_, [&] {
    vocabulary_.emplace(data::Vocabulary::load(o.vocabulary));
    o.model.vocab_size = vocabulary_->size();
    data::ParallelCorpusOptions corpus_options;
    corpus_options.source_file = o.train_source;
    corpus_options.target_file = o.train_target;
    corpus_options.cache_dir = run_ / "cache";
    corpus_options.max_tokens = static_cast<std::size_t>(o.max_length);
    corpus_options.log = &log_;
    corpus_ = std::make_unique<data::ParallelCorpus>(data::ParallelCorpus::load(*vocabulary_, corpus_options));
    if (corpus_->size() == 0) throw Error("no usable sentence pairs in " + o.train_source + " / " + o.train_target);
    batcher_ = std::make_unique<data::Batcher>(*corpus_,
                                               data::BatchingOptions{static_cast<std::size_t>(o.batch_tokens), o.seed});
    if (leader() && !o.valid_source.empty())
      validation_ = std::make_unique<Validation>(o, *vocabulary_, run_ / "cache", log_);
  });

  // Model and optimizer: rank 0 starts them fresh or from the newest checkpoint that loads, and
  // every other rank receives its weights, moments and progress.
  dist::on_every_rank(ranks_, [&] {
    // Weights, gradients and Adam's two moments: 16 bytes per parameter before any activation.
    const double bytes = 16 * o.model.parameter_count();
    if (bytes > physical_memory_bytes()) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "the model has %.4g parameters: training needs %.4g bytes for the weights, gradients and "
                    "Adam's moments alone, more than this machine's memory (%.4g bytes)",
                    o.model.parameter_count(), bytes, physical_memory_bytes());
      throw Error(text);
    }
    model_ = std::make_unique<Transformer>(o.model, cpu_backend(parse_matmul_precision(o.precision)));
    adam_ = std::make_unique<AdamOptimizer>(*model_, AdamOptions{o.adam_beta1, o.adam_beta2, o.adam_eps});
  });
  dist::on_every_rank(ranks_, [&] {
    if (!leader()) return;
    if (resume) {
      bool loaded = false;
      for (auto it = existing.rbegin(); it != existing.rend() && !loaded; ++it) {
        CheckpointContents contents;
        try {
          contents = load_checkpoint(*it, *model_, adam_.get());
        } catch (const Error& e) {
          log_ << "warning: " << e.what() << "; trying an older checkpoint\n";
          continue;
        }
        progress_ = contents.progress;
        const std::string changes =
            changed_options(contents.options, progress_.ranks, options_to_json(o), ranks_.size());
        if (!changes.empty() && !accept_changes)
          throw Error("--resume: " + it->string() + " was trained with other options: " + changes +
                      ". Resuming with them would not continue the same run (other batches, another order or "
                      "schedule). Give the checkpoint's values, or add --resume-with-changes to continue anyway");
        if (!changes.empty())
          log_ << "note: resuming with changed options (--resume-with-changes): " << changes << "\n";
        log_ << "resuming from " << it->string() << " (step " << progress_.step << ", epoch " << progress_.epoch + 1
             << ")\n";
        loaded = true;
      }
      if (!loaded) throw Error("--resume: no checkpoint in " + checkpoints_.string() + " could be loaded");
      if (progress_.ranks != ranks_.size())
        log_ << "note: the checkpoint was written by a run of " << progress_.ranks << " rank(s); continuing with "
             << ranks_.size() << ": same weights, optimizer state and place in the data, but the global batch is now "
             << o.batch_tokens << " x " << ranks_.size() << " x " << o.accumulate << " tokens\n";
    } else {
      model_->initialize(o.seed);
      log_ << "model: " << model_->parameter_count() << " parameters (" << nlohmann::json(o.model).dump() << "), "
           << o.precision << " matrix products\n";
    }
  });
  if (ranks_.size() > 1) {
    const std::size_t n = static_cast<std::size_t>(model_->parameter_count()) * sizeof(float);
    ranks_.broadcast(model_->parameters(), n, 0);
    ranks_.broadcast(adam_->first_moment(), n, 0);
    ranks_.broadcast(adam_->second_moment(), n, 0);
    std::string progress = nlohmann::json(progress_).dump();
    dist::broadcast(ranks_, progress, 0);
    progress_ = nlohmann::json::parse(progress).get<TrainingProgress>();
    std::int64_t steps = adam_->steps();
    ranks_.broadcast(&steps, sizeof steps, 0);
    adam_->set_steps(steps);
    log_ << ranks_.size() << " ranks (" << ranks_.description() << "), " << omp_get_max_threads()
         << " thread(s) on rank 0; global batch: batch_tokens " << o.batch_tokens << " x " << ranks_.size()
         << " ranks x accumulate " << o.accumulate << "\n";
  }
  progress_.ranks = ranks_.size();

  options_json_ = options_to_json(o);
  if (leader()) {
    write_file_atomic(run_ / "config.json", options_json_.dump(2) + "\n");
    truncate_log(run_ / "train.jsonl", progress_.step);
    jsonl_.open(run_ / "train.jsonl", std::ios::app);
  }
  schedule_ = LearningRateSchedule{o.model.d_model, o.warmup_steps, o.lr_scale,
                                   o.lr_decay != "linear" ? 0
                                   : o.max_steps > 0      ? o.max_steps
                                                          : progress_.decay_end};
  start_elapsed_ = progress_.elapsed_seconds;
  first_step_ = progress_.step;
  epoch_ = batcher_->epoch(static_cast<std::uint64_t>(progress_.epoch));
  batches_.resize(static_cast<std::size_t>(o.accumulate));
  if (o.accumulate > 1) gradient_sum_.resize(model_->backend(), static_cast<std::size_t>(model_->parameter_count()));
  // Training time, time to the next checkpoint and the first progress window start now, not
  // before the setup (loading, tokenising) above.
  started_ = last_save_ = window_start_ = Clock::now();
}

std::string Trainer::Run::stop_reason() {
  // Signals reach each rank on its own; the clock that counts is rank 0's.
  enum { kSignal, kTimeBudget, kSaveByTime, kSnapshotMinute, kCount };
  std::int64_t control[kCount] = {stop_signal() != 0 ? 1 : 0, 0, 0, 0};
  if (leader()) {
    const double now = elapsed();
    control[kTimeBudget] = o_.time_budget_minutes > 0 && now >= o_.time_budget_minutes * 60;
    control[kSaveByTime] =
        o_.save_every_minutes > 0 &&
        std::chrono::duration<double>(Clock::now() - last_save_).count() >= o_.save_every_minutes * 60;
    control[kSnapshotMinute] = snapshot_minute(now, o_.snapshot_every_minutes);
  }
  ranks_.sum(control, kCount);
  if (const auto minute = static_cast<int>(control[kSnapshotMinute]); minute > 0 && leader()) {
    const auto folder = run_ / "snapshots" / snapshot_name(minute);
    if (!std::filesystem::exists(folder))
      save_model_directory(
          folder, *model_, *vocabulary_,
          model_metadata({{"step", std::to_string(progress_.step)}, {"minutes", std::to_string(minute)}}));
  }
  if (control[kSaveByTime] && progress_.step > first_step_) save();
  if (control[kSignal]) return "interrupted";
  if (o_.max_steps > 0 && progress_.step >= o_.max_steps) return "max_steps";
  if (progress_.decay_end > 0 && o_.max_steps == 0 && progress_.step >= progress_.decay_end) return "lr_decay_end";
  if (control[kTimeBudget]) return "time_budget";
  if (o_.max_epochs > 0 && progress_.epoch >= o_.max_epochs) return "max_epochs";
  if (o_.early_stopping > 0 && progress_.validations_without_improvement >= o_.early_stopping) return "early_stopping";
  return "";
}

bool Trainer::Run::update() {
  // The global batch: ranks x accumulate consecutive batches of the epoch order (fewer where the
  // epoch limit falls inside it). Every rank walks all of them, to count the global batch's target
  // tokens, and fills its own share; the gradient is averaged over all of those tokens.
  const int per_rank = o_.accumulate;
  const int slots = ranks_.size() * per_rank;
  const int first_mine = ranks_.rank() * per_rank;
  std::int64_t update_tokens = 0;
  int used = 0, mine = 0;
  for (int k = 0; k < slots; ++k) {
    if (progress_.next_batch >= static_cast<std::int64_t>(epoch_.size())) {
      ++progress_.epoch;
      progress_.next_batch = 0;
      if (o_.max_epochs > 0 && progress_.epoch >= o_.max_epochs) break;
      epoch_ = batcher_->epoch(static_cast<std::uint64_t>(progress_.epoch));
    }
    const auto pairs = epoch_.pairs(static_cast<std::size_t>(progress_.next_batch++));
    update_tokens += static_cast<std::int64_t>(batcher_->target_tokens(pairs));
    if (k >= first_mine && k < first_mine + per_rank) batcher_->fill(pairs, batches_[static_cast<std::size_t>(mine++)]);
    ++used;
  }
  if (used == 0) return false;  // the epoch limit was reached exactly at a boundary
  // Each batch's gradient is computed from zero and added to the sum of the earlier ones, the
  // way the ranks' gradients are added: 1 rank accumulating 2 batches then sums exactly what 2
  // ranks of 1 batch sum, to the bit.
  Backend& be = model_->backend();
  const std::int64_t n = model_->parameter_count();
  double update_loss = 0;  // this rank's share of the update's loss sum
  model_->zero_gradients();
  for (int i = 0; i < mine; ++i) {
    if (i > 0) {
      be.copy(gradient_sum_.data(), model_->gradients(), static_cast<std::size_t>(n) * sizeof(float));
      model_->zero_gradients();
    }
    // Dropout masks follow the batch's place in the global batch, whoever trains it.
    const std::uint64_t slot = static_cast<std::uint64_t>(first_mine + i);
    const nn::Dropout dropout{o_.model.dropout, dropout_seed(o_.seed, progress_.step, slot),
                              o_.model.activation_dropout};
    const LossSums s = model_->forward_backward(batches_[static_cast<std::size_t>(i)].view(), dropout,
                                                1.0f / static_cast<float>(update_tokens));
    if (i > 0) be.accumulate(gradient_sum_.data(), model_->gradients(), n);
    window_loss_ += s.loss;
    window_nll_ += s.nll;
    update_loss += s.loss;
  }
  if (ranks_.size() > 1) {
    const auto t0 = Clock::now();
    ranks_.sum(model_->gradients(), static_cast<std::size_t>(model_->parameter_count()));
    ranks_.sum(&update_loss, 1);
    window_comm_ += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  // Every rank now holds the same global gradient and loss, so every rank decides alike.
  const double norm = std::sqrt(be.sum_squares(model_->gradients(), n));
  check_divergence(norm, update_loss / static_cast<double>(update_tokens));
  float grad_scale = 1.0f;
  if (o_.clip_norm > 0 && norm > o_.clip_norm) grad_scale = static_cast<float>(o_.clip_norm / norm);
  lr_ = schedule_(progress_.step + 1);
  adam_->step(static_cast<float>(lr_), grad_scale);
  ++progress_.step;
  if (progress_.step == o_.warmup_steps) estimate_decay_end();
  progress_.target_tokens += update_tokens;
  window_tokens_ += update_tokens;
  return true;
}

void Trainer::Run::after_update() {
  if (progress_.step % o_.log_every == 0) {
    double sums[2] = {window_loss_, window_nll_};
    ranks_.sum(sums, 2);
    const double secs = std::chrono::duration<double>(Clock::now() - window_start_).count();
    const double loss = sums[0] / static_cast<double>(window_tokens_);
    const double ppl = std::exp(sums[1] / static_cast<double>(window_tokens_));
    const double tps = static_cast<double>(window_tokens_) / secs;
    const double now = elapsed();
    // ETA: the nearest of the limits that are set.
    double eta = -1;
    const double rate = static_cast<double>(progress_.step - first_step_) / std::max(1e-9, now - start_elapsed_);
    if (o_.time_budget_minutes > 0) eta = o_.time_budget_minutes * 60 - now;
    if (o_.max_steps > 0) {
      const double by_steps = static_cast<double>(o_.max_steps - progress_.step) / std::max(rate, 1e-9);
      eta = eta < 0 ? by_steps : std::min(eta, by_steps);
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  ppl < 1e6 ? "step %7lld | epoch %3lld | loss %.4f | ppl %8.2f | lr %.3e | %6.0f tok/s | %s%s%s"
                            : "step %7lld | epoch %3lld | loss %.4f | ppl %8.2e | lr %.3e | %6.0f tok/s | %s%s%s",
                  static_cast<long long>(progress_.step), static_cast<long long>(progress_.epoch + 1), loss, ppl, lr_,
                  tps, clock_text(now).c_str(), eta >= 0 ? " | ETA " : "", eta >= 0 ? clock_text(eta).c_str() : "");
    log_ << line;
    if (ranks_.size() > 1) {
      std::snprintf(line, sizeof line, " | %d ranks, allreduce %.0f%%", ranks_.size(), 100 * window_comm_ / secs);
      log_ << line;
    }
    log_ << std::endl;
    if (leader()) {
      nlohmann::json record{{"type", "train"},
                            {"step", progress_.step},
                            {"epoch", progress_.epoch + 1},
                            {"loss", loss},
                            {"ppl", ppl},
                            {"lr", lr_},
                            {"tokens_per_second", tps},
                            {"target_tokens", progress_.target_tokens},
                            {"elapsed_seconds", now}};
      if (ranks_.size() > 1) {
        record["ranks"] = ranks_.size();
        record["allreduce_seconds"] = window_comm_;
      }
      emit(record);
    }
    window_loss_ = window_nll_ = window_comm_ = 0;
    window_tokens_ = 0;
    window_start_ = Clock::now();
  }

  if (!o_.valid_source.empty() && progress_.step % o_.valid_every == 0) {
    // Rank 0 validates; every rank learns the dev loss, so early stopping agrees everywhere.
    ValidationResult v;
    if (leader()) v = validation_->run(*model_);
    ranks_.broadcast(&v.cross_entropy, sizeof v.cross_entropy, 0);
    const bool best = v.cross_entropy < progress_.best_valid_loss;
    if (best) {
      progress_.best_valid_loss = v.cross_entropy;
      progress_.best_step = progress_.step;
      progress_.validations_without_improvement = 0;
      if (leader())
        save_model_directory(run_ / "best", *model_, *vocabulary_,
                             model_metadata({{"step", std::to_string(progress_.step)}}));
    } else {
      ++progress_.validations_without_improvement;
    }
    if (leader()) {
      log_ << "valid step " << progress_.step << " | " << v.summary() << (best ? " | new best" : "") << std::endl;
      nlohmann::json record = v.to_json();
      record["type"] = "valid";
      record["step"] = progress_.step;
      record["best"] = best;
      record["elapsed_seconds"] = elapsed();
      emit(record);
    }
    window_start_ = Clock::now();  // validation time is not training throughput
  }
  if (o_.save_every > 0 && progress_.step % o_.save_every == 0) save();
}

// A run that diverges stops before the update is applied, saying what to change. fairseq raises
// on a gradient that is not finite in float32 too (it skips updates only under fp16 loss scaling,
// which attn does not use: bf16 has float32's range); Marian has --throw-on-divergence. Besides
// NaN/Inf, a loss per token beyond 100 x ln(vocabulary size) (a model that gives the right token a
// probability under V^-100, far worse than guessing uniformly) is divergence too: with a learning
// rate far too high, weights and logits grow while every value stays finite.
void Trainer::Run::check_divergence(double gradient_norm, double loss_per_token) const {
  const double limit = 100 * std::log(static_cast<double>(o_.model.vocab_size));
  std::string what;
  if (!std::isfinite(gradient_norm))
    what = "the gradient is not finite (its L2 norm is " + std::to_string(gradient_norm) + ")";
  else if (!std::isfinite(loss_per_token))
    what = "the loss is not finite";
  else if (loss_per_token > limit)
    what = "the loss per target token is " + std::to_string(loss_per_token) +
           ", beyond 100 x ln(vocabulary size) = " + std::to_string(limit) + " (guessing uniformly gives " +
           std::to_string(limit / 100) + ")";
  if (what.empty()) return;
  std::string last = "none yet";
  if (leader()) {
    const auto saved = list_checkpoints(checkpoints_);
    if (!saved.empty()) last = saved.back().string();
  }
  char settings[256];
  std::snprintf(settings, sizeof settings, "lr_scale %g, warmup_steps %d, clip_norm %g", o_.lr_scale, o_.warmup_steps,
                static_cast<double>(o_.clip_norm));
  throw dist::JobError("training diverged at update " + std::to_string(progress_.step + 1) + ": " + what +
                       ". The update was not applied and nothing was saved from it. The learning rate is too high "
                       "for this model and batch (" +
                       settings +
                       "): lower lr_scale, raise warmup_steps, or set "
                       "clip_norm (e.g. 1), then continue from the last checkpoint (" +
                       last + ") with --resume-with-changes, or start again. train.jsonl shows where the loss turned.");
}

// lr_decay linear under a time budget alone: at the end of the warmup, the update at which the
// budget will run out at this run's speed so far becomes where the learning rate reaches 0. It is
// kept in the checkpoints, so a resumed run decays as it would have; should the run be slower than
// estimated, the time budget still ends it (not quite annealed), should it be faster, it stops at
// that update. Rank 0's clock decides, as for the budget itself.
void Trainer::Run::estimate_decay_end() {
  if (o_.lr_decay != "linear" || o_.max_steps > 0 || o_.time_budget_minutes <= 0 || progress_.decay_end > 0) return;
  double end = 0;
  if (leader()) {
    const double seconds = elapsed() - start_elapsed_;
    const double per_second = static_cast<double>(progress_.step - first_step_) / std::max(seconds, 1e-9);
    const double left = std::max(0.0, o_.time_budget_minutes * 60 - elapsed());
    end = static_cast<double>(progress_.step) + std::max(1.0, std::floor(left * per_second));
  }
  ranks_.sum(&end, 1);
  progress_.decay_end = static_cast<std::int64_t>(end);
  schedule_.linear_end = progress_.decay_end;
  log_ << "lr_decay linear: at " << (progress_.step - first_step_) / std::max(elapsed() - start_elapsed_, 1e-9)
       << " updates/s the time budget ends near update " << progress_.decay_end
       << "; the learning rate falls linearly to 0 there\n";
}

// Every rank applied the same updates to the same weights, so the weights must be identical to
// the bit; checked whenever a checkpoint is written (a reduction that gave ranks different sums
// would otherwise let them drift apart silently).
void Trainer::Run::check_ranks_agree_on_weights() {
  if (ranks_.size() == 1) return;
  const std::string mine =
      to_hex(sha256(std::string_view(reinterpret_cast<const char*>(model_->parameters()),
                                     static_cast<std::size_t>(model_->parameter_count()) * sizeof(float))));
  const auto all = ranks_.gather_all(mine);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw dist::JobError("after step " + std::to_string(progress_.step) + " the weights of rank " +
                           std::to_string(r) +
                           " differ from rank 0's: the gradient sums differed between ranks, or the ranks' CPUs "
                           "compute the update differently (nodes of different kinds, each with its own "
                           "-march=native build); the last checkpoint is intact: continue with --resume");
}

void Trainer::Run::save() {
  // Never let a checkpoint of weights that are not finite replace a good one.
  if (!std::isfinite(model_->backend().sum_squares(model_->parameters(), model_->parameter_count())))
    throw dist::JobError("after update " + std::to_string(progress_.step) +
                         " the weights are not finite; no checkpoint written (the last one is intact)");
  check_ranks_agree_on_weights();
  if (leader()) {
    progress_.elapsed_seconds = elapsed();
    save_checkpoint(checkpoint_path(checkpoints_, progress_.step), *model_, *adam_, progress_, options_json_);
    auto all = list_checkpoints(checkpoints_);
    for (std::size_t i = 0; i + static_cast<std::size_t>(o_.keep_checkpoints) < all.size(); ++i)
      std::filesystem::remove(all[i]);
  }
  last_save_ = Clock::now();
}

TrainResult Trainer::Run::finish(std::string stop_reason) {
  save();
  if (leader()) {
    save_model_directory(run_ / "model", *model_, *vocabulary_,
                         model_metadata({{"step", std::to_string(progress_.step)}}));
    log_ << "training stopped (" << stop_reason << ") at step " << progress_.step << ", epoch " << progress_.epoch + 1
         << ", after " << clock_text(progress_.elapsed_seconds) << "; checkpoint "
         << checkpoint_path(checkpoints_, progress_.step).string()
         << (stop_reason == "interrupted" ? "; continue with --resume" : "") << std::endl;
  }
  TrainResult result;
  result.progress = progress_;
  result.stop_reason = std::move(stop_reason);
  return result;
}

Trainer::Trainer(TrainOptions options, std::ostream& log)
    : options_(std::move(options)), log_(log), own_ranks_(dist::single_process()), ranks_(own_ranks_.get()) {}

Trainer::Trainer(TrainOptions options, std::ostream& log, dist::Communicator& ranks)
    : options_(std::move(options)), log_(log), ranks_(&ranks) {}

Trainer::~Trainer() = default;

TrainResult Trainer::run(bool resume, bool accept_changes) {
  Run run(options_, log_, *ranks_, resume, accept_changes);
  run.on_record = on_record_;
  std::string reason;
  while ((reason = run.stop_reason()).empty()) {
    if (run.update()) run.after_update();
  }
  return run.finish(std::move(reason));
}

}  // namespace attn
