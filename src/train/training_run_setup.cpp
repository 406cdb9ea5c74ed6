#include <omp.h>

#include <cstdio>
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/seed.h"
#include "train/dist/host.h"
#include "train/rank_agreement.h"
#include "train/resume_options.h"
#include "train/run_report.h"
#include "train/training_run.h"

namespace attn {
namespace {

// config.json's sentence_tokens: the source length that this share of the training sentences do not
// exceed (docs/results.md: a document's sentences cut at the length 4 in 5 verses stay within, chosen on
// the dev paragraphs).
constexpr double kSentenceTokensQuantile = 0.8;

}  // namespace

Trainer::Run::Run(TrainOptions& o, std::ostream& log, dist::Communicator& ranks, const TrainingFaults& faults,
                  bool resume, bool accept_changes)
    : o_(o), faults_(faults), ranks_(ranks), log_(ranks.rank() == 0 ? log : silent_) {
  // Before the options are checked, compared with a checkpoint's or written down.
  if (const std::string decay = resolve_lr_decay(o_); !decay.empty()) log_ << decay << "\n";
  run_ = o_.run_dir;
  checkpoints_ = run_ / "checkpoints";
  const std::vector<std::filesystem::path> existing = check_run_folder(resume);
  set_threads();
  if (ranks_.size() > 1) agree_on_the_job();
  dist::on_every_rank(ranks_, [&] { load_data(); });
  // Model and optimizer: rank 0 starts them fresh or from the newest checkpoint that loads, and
  // every other rank receives its weights, moments and progress.
  dist::on_every_rank(ranks_, [&] { create_model(); });
  dist::on_every_rank(ranks_, [&] {
    if (!leader()) return;
    if (resume)
      resume_from(existing, accept_changes);
    else
      start_fresh();
  });
  if (ranks_.size() > 1) share_rank0_state();
  progress_.ranks = ranks_.size();
  prepare_loop();
  // Training time, time to the next checkpoint and the first progress window start now, not
  // before the setup (loading, tokenising) above.
  clock_ = faults_.clock(start_elapsed_, first_step_, o_.warmup_steps);
  last_save_ = window_start_ = Clock::now();
}

std::vector<std::filesystem::path> Trainer::Run::check_run_folder(bool resume) {
  std::vector<std::filesystem::path> existing;
  dist::on_every_rank(ranks_, [&] {
    validate(o_);
    if (leader()) {
      std::filesystem::create_directories(checkpoints_);
      existing = list_checkpoints(checkpoints_);
      if (!resume && !existing.empty())
        throw Error("run folder " + run_.string() + " already holds checkpoints (" +
                    existing.back().filename().string() + "): continue it with --resume, or choose another --run-dir");
      if (resume && existing.empty()) throw Error("--resume: no checkpoint in " + checkpoints_.string());
    }
  });
  return existing;
}

void Trainer::Run::set_threads() {
  const int shared_threads = ranks_.size() > 1 ? default_threads(ranks_) : 0;
  if (o_.threads > 0)
    omp_set_num_threads(o_.threads);
  else if (ranks_.size() > 1)
    omp_set_num_threads(shared_threads);
}

void Trainer::Run::agree_on_the_job() {
  std::string mine;
  dist::on_every_rank(ranks_, [&] { mine = job_fingerprint(o_).dump(); });
  const std::vector<std::string> all = ranks_.gather_all(mine), hosts = ranks_.gather_all(dist::host_description());
  if (const std::string diff = fingerprint_differences(all, hosts); !diff.empty()) throw dist::JobError(diff);
}

void Trainer::Run::load_data() {
  vocabulary_.emplace(data::Vocabulary::load(o_.vocabulary));
  o_.model.vocab_size = vocabulary_->size();
  data::ParallelCorpusOptions corpus_options;
  corpus_options.source_file = o_.train_source;
  corpus_options.target_file = o_.train_target;
  corpus_options.cache_dir = run_ / "cache";
  corpus_options.max_tokens = static_cast<std::size_t>(o_.max_length);
  corpus_options.log = &log_;
  corpus_options.keep_text = o_.bpe_dropout > 0;
  corpus_ = std::make_unique<data::ParallelCorpus>(data::ParallelCorpus::load(*vocabulary_, corpus_options));
  if (corpus_->size() == 0) throw Error("no usable sentence pairs in " + o_.train_source + " / " + o_.train_target);
  // Recorded with the model (config.json's sentence_tokens), recomputed from the data at every start:
  // the source length 4 in 5 training sentences do not exceed. A document's longer sentences are cut.
  o_.model.sentence_tokens =
      static_cast<int>(std::min<std::size_t>(corpus_->source_length_quantile(kSentenceTokensQuantile),
                                             static_cast<std::size_t>(std::max(o_.model.max_positions - 1, 0))));
  if (o_.bpe_dropout > 0) bpe_dropout_.emplace(*vocabulary_);
  batcher_ = std::make_unique<data::Batcher>(*corpus_,
                                             data::BatchingOptions{static_cast<std::size_t>(o_.batch_tokens), o_.seed});
  if (leader() && !o_.valid_source.empty())
    validation_ = std::make_unique<Validation>(o_, *vocabulary_, run_ / "cache", log_);
}

void Trainer::Run::create_model() {
  // Weights, gradients and Adam's two moments: 16 bytes per parameter before any activation, and
  // 8 more with a moving average (the average, and room for the weights while it is validated).
  const double bytes = (o_.ema_decay > 0 ? 24 : 16) * o_.model.parameter_count();
  if (bytes > physical_memory_bytes()) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "the model has %.4g parameters: training needs %.4g bytes for the weights, gradients, "
                  "Adam's moments (and the moving average) alone, more than this machine's memory (%.4g bytes)",
                  o_.model.parameter_count(), bytes, physical_memory_bytes());
    throw Error(text);
  }
  model_ = std::make_unique<Transformer>(o_.model, cpu_backend(parse_matmul_precision(o_.precision)));
  // The moving average lives on rank 0 alone: only rank 0 validates and writes models and checkpoints.
  adam_ = std::make_unique<AdamOptimizer>(
      *model_, AdamOptions{o_.adam_beta1, o_.adam_beta2, o_.adam_eps, leader() ? o_.ema_decay : 0.0});
}

void Trainer::Run::resume_from(const std::vector<std::filesystem::path>& existing, bool accept_changes) {
  bool loaded = false;
  int saved_accumulate = 1;
  for (auto it = existing.rbegin(); it != existing.rend() && !loaded; ++it) {
    CheckpointContents contents;
    try {
      contents = load_checkpoint(*it, *model_, adam_.get());
    } catch (const Error& e) {
      log_ << "warning: " << e.what() << "; trying an older checkpoint\n";
      continue;
    }
    progress_ = contents.progress;
    const std::string changes = changed_options(contents.options, progress_.ranks, options_to_json(o_), ranks_.size());
    if (!changes.empty() && !accept_changes)
      throw Error("--resume: " + it->string() + " was trained with other options: " + changes +
                  ". Resuming with them would not continue the same run (other batches, another order or "
                  "schedule, other weights validated and delivered). Give the checkpoint's values, or add "
                  "--resume-with-changes to continue anyway");
    if (!changes.empty()) log_ << "note: resuming with changed options (--resume-with-changes): " << changes << "\n";
    if (adam_->has_average() && !contents.had_average)
      log_ << "note: " << it->string()
           << " holds no moving average of the weights; the average (ema_decay) starts from its weights\n";
    // The dev loss so far was measured on other weights (the average, or the weights themselves):
    // the best model and early stopping start over rather than compare the two.
    if (adam_->has_average() != (contents.options.value("ema_decay", 0.0) > 0)) {
      log_ << "note: ema_decay " << (adam_->has_average() ? "switched on" : "switched off")
           << ": validation now measures other weights, so the best dev loss (and early stopping's count) "
              "start over\n";
      progress_.best_valid_loss = TrainingProgress{}.best_valid_loss;
      progress_.best_step = 0;
      progress_.validations_without_improvement = 0;
    }
    log_ << "resuming from " << it->string() << " (step " << progress_.step << ", epoch " << progress_.epoch + 1
         << ")\n";
    saved_accumulate = contents.options.value("accumulate", 1);
    loaded = true;
  }
  if (!loaded) throw Error("--resume: no checkpoint in " + checkpoints_.string() + " could be loaded");
  const int saved_batches = progress_.ranks * saved_accumulate, batches = ranks_.size() * o_.accumulate;
  if (progress_.ranks != ranks_.size() && saved_batches == batches)
    log_ << "note: the checkpoint was written by a run of " << progress_.ranks << " rank(s) x accumulate "
         << saved_accumulate << "; continuing with " << ranks_.size() << " x " << o_.accumulate
         << ": the same global batch (" << o_.batch_tokens << " x " << batches << " tokens), weights, optimizer "
         << "state and place in the data\n";
  else if (progress_.ranks != ranks_.size())
    log_ << "note: the checkpoint was written by a run of " << progress_.ranks << " rank(s); continuing with "
         << ranks_.size() << ": same weights, optimizer state and place in the data, but the global batch is now "
         << o_.batch_tokens << " x " << ranks_.size() << " x " << o_.accumulate << " tokens"
         << (saved_batches % ranks_.size() == 0
                 ? " (--accumulate " + std::to_string(saved_batches / ranks_.size()) + " keeps the checkpoint's " +
                       std::to_string(o_.batch_tokens) + " x " + std::to_string(saved_batches) + ")"
                 : std::string())
         << "\n";
}

void Trainer::Run::start_fresh() {
  model_->initialize(o_.seed);
  adam_->reset_average();
  log_ << "model: " << model_->parameter_count() << " parameters (" << nlohmann::json(o_.model).dump() << "), "
       << o_.precision << " matrix products\n";
}

void Trainer::Run::share_rank0_state() {
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
       << " thread(s) on rank 0; global batch: batch_tokens " << o_.batch_tokens << " x " << ranks_.size()
       << " ranks x accumulate " << o_.accumulate << "\n";
}

void Trainer::Run::prepare_loop() {
  options_json_ = options_to_json(o_);
  if (leader()) {
    write_file_atomic(run_ / "config.json", options_json_.dump(2) + "\n");
    truncate_training_log(run_ / "train.jsonl", progress_.step);
    jsonl_.open(run_ / "train.jsonl", std::ios::app);
  }
  schedule_ = LearningRateSchedule{o_.model.d_model, o_.warmup_steps, o_.lr_scale};
  if (o_.lr_decay == "linear" && o_.max_steps > 0) fixed_decay_.end = o_.max_steps;
  start_elapsed_ = progress_.elapsed_seconds;
  first_step_ = progress_.step;
  start_epoch();
  batches_.resize(static_cast<std::size_t>(o_.accumulate));
  if (o_.accumulate > 1) gradient_sum_.resize(model_->backend(), static_cast<std::size_t>(model_->parameter_count()));
  lookups_ =
      std::make_unique<LookupGradientSum>(model_->backend(), model_->config().vocab_size, model_->config().d_model);
}

void Trainer::Run::start_epoch() {
  epoch_batcher_.reset();  // before the corpus it reads
  epoch_corpus_.reset();
  if (bpe_dropout_ && progress_.epoch + 1 >= o_.dropout_from_epoch) {
    const auto begin = Clock::now();
    // Each epoch's cut from (seed, epoch) alone: a resumed run cuts its epoch again the same way.
    const std::uint64_t seed =
        derive_seed(o_.seed ^ 0xb5ad4eceda1ce2a9ULL, static_cast<std::uint64_t>(progress_.epoch));
    epoch_corpus_ = std::make_unique<data::ParallelCorpus>(corpus_->resampled(*bpe_dropout_, o_.bpe_dropout, seed));
    epoch_batcher_ = std::make_unique<data::Batcher>(*epoch_corpus_, batcher_->options());
    char line[256];
    std::snprintf(line, sizeof line,
                  "epoch %lld: BPE-dropout %g: %zu + %zu tokens (usually %zu + %zu), cut in %.1f s\n",
                  static_cast<long long>(progress_.epoch + 1), o_.bpe_dropout, epoch_corpus_->report().source_tokens,
                  epoch_corpus_->report().target_tokens, corpus_->report().source_tokens,
                  corpus_->report().target_tokens, std::chrono::duration<double>(Clock::now() - begin).count());
    log_ << line;
  }
  epoch_ = batcher().epoch(static_cast<std::uint64_t>(progress_.epoch));
}

}  // namespace attn
