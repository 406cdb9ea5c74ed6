#include "train/trainer.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/clock_text.h"
#include "core/error.h"
#include "core/seed.h"
#include "core/sha256.h"
#include "train/snapshot_schedule.h"
#include "train/stop_signals.h"
#include "train/gradient_buckets.h"
#include "train/training_run.h"

namespace attn {
namespace {

// The dropout seed of the batch in `slot` of the global batch of update `step`: the seeds of
// single-process runs for the first 1024 slots, a separate family beyond (more ranks x accumulate
// than that would otherwise reuse the next update's seeds).
std::uint64_t dropout_seed(std::uint64_t seed, std::int64_t step, std::uint64_t slot) {
  if (slot < 1024) return derive_seed(seed, static_cast<std::uint64_t>(step) * 1024 + slot);
  return derive_seed(derive_seed(seed ^ 0x6a09e667f3bcc908ULL, static_cast<std::uint64_t>(step)), slot);
}

}  // namespace

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
  // The ranks leave this sum together: the update's time split (time_split) starts here.
  synced_ = Clock::now();
  comm_since_sync_ = 0;
  if (const auto minute = static_cast<int>(control[kSnapshotMinute]); minute > 0 && leader()) save_snapshot(minute);
  if (control[kSaveByTime] && progress_.step > first_step_) save();
  if (control[kSignal]) return "interrupted";
  if (o_.max_steps > 0 && progress_.step >= o_.max_steps) return "max_steps";
  if (decays_to_the_clock() && progress_.decay.end > 0 && progress_.step >= progress_.decay.end) return "lr_decay_end";
  if (control[kTimeBudget]) return "time_budget";
  if (o_.max_epochs > 0 && progress_.epoch >= o_.max_epochs) return "max_epochs";
  if (o_.early_stopping > 0 && progress_.validations_without_improvement >= o_.early_stopping) return "early_stopping";
  return "";
}

// One update, the paper's training step (section 5): the global batch, each of this rank's batches'
// gradient, their sum over the ranks, the clip, the schedule's rate and Adam's step. Every rank does
// each step alike; after the sum, every rank holds the same gradient and loss and decides alike.
bool Trainer::Run::update() {
  const GlobalBatch batch = gather_global_batch();
  if (batch.batches == 0) return false;  // the epoch limit was reached exactly at a boundary
  double loss = accumulate_gradients(batch);
  sum_across_ranks(loss);
  const float grad_scale = clip_scale(loss / static_cast<double>(batch.target_tokens));
  lr_ = schedule_.rate(progress_.step + 1, decay_line());
  adam_->step(static_cast<float>(lr_), grad_scale);
  faults_.after_adam(*model_);
  count_update(batch.target_tokens);
  return true;
}

// The global batch: ranks x accumulate consecutive batches of the epoch order (fewer where the
// epoch limit falls inside it). Every rank walks all of them, to count the global batch's target
// tokens, and fills its own share; the gradient is averaged over all of those tokens.
Trainer::Run::GlobalBatch Trainer::Run::gather_global_batch() {
  GlobalBatch b;
  const int per_rank = o_.accumulate;
  const int slots = ranks_.size() * per_rank;
  b.first_mine = ranks_.rank() * per_rank;
  for (int k = 0; k < slots; ++k) {
    if (progress_.next_batch >= static_cast<std::int64_t>(epoch_.size()) && !next_epoch()) break;
    const auto pairs = epoch_.pairs(static_cast<std::size_t>(progress_.next_batch++));
    b.target_tokens += static_cast<std::int64_t>(batcher().target_tokens(pairs));
    if (k >= b.first_mine && k < b.first_mine + per_rank)
      batcher().fill(pairs, batches_[static_cast<std::size_t>(b.mine++)]);
    ++b.batches;
  }
  return b;
}

bool Trainer::Run::next_epoch() {
  ++progress_.epoch;
  progress_.next_batch = 0;
  if (o_.max_epochs > 0 && progress_.epoch >= o_.max_epochs) return false;
  if (o_.dropout_from_epoch > 1 && progress_.epoch + 1 == o_.dropout_from_epoch) {
    log_ << "epoch " << progress_.epoch + 1 << ": dropout " << o_.model.dropout << " (activation dropout "
         << o_.model.activation_dropout;
    if (o_.bpe_dropout > 0) log_ << ", BPE-dropout " << o_.bpe_dropout;
    log_ << ") from here on (dropout_from_epoch)" << std::endl;
  }
  start_epoch();
  return true;
}

// Each batch's gradient is computed from zero and added to the sum of the earlier ones, the way the
// ranks' gradients are added: 1 rank accumulating 2 batches then sums exactly what 2 ranks of 1
// batch sum, to the bit. The shared embedding's lookups' gradient is summed apart, over the rows
// the batches look up (train/lookup_gradient_sum.h), and added last.
double Trainer::Run::accumulate_gradients(const GlobalBatch& batch) {
  // Late dropout: none until the update's batches reach epoch dropout_from_epoch.
  const bool dropping = progress_.epoch + 1 >= o_.dropout_from_epoch;
  Backend& be = model_->backend();
  const std::int64_t n = model_->parameter_count();
  double loss = 0;
  model_->zero_gradients();
  std::vector<TokenBatch> mine;
  for (int i = 0; i < batch.mine; ++i) mine.push_back(batches_[static_cast<std::size_t>(i)].view());
  lookups_->begin_update(mine);
  // Across ranks, overlapped: the last batch's backward pass sends each bucket of the gradient as
  // soon as it has finished it (with the earlier batches' sum added first, as below), the output
  // layer's part of the embedding first.
  const bool overlapped = ranks_.size() > 1 && o_.allreduce == "overlapped";
  const std::int64_t bucket = GradientBuckets::floats_of_mb(o_.allreduce_bucket_mb);
  const std::int64_t embedding = static_cast<std::int64_t>(model_->config().vocab_size) * model_->config().d_model;
  std::optional<GradientBuckets> buckets;
  auto start_buckets = [&](const float* earlier) {
    lookups_->start_rows(ranks_);  // the rows any rank looks up: before the buckets, on every rank
    buckets.emplace(ranks_, be, model_->gradients(), n, bucket, wire(), earlier, embedding);
  };
  for (int i = 0; i < batch.mine; ++i) {
    if (i > 0) {
      be.copy(gradient_sum_.data(), model_->gradients(), static_cast<std::size_t>(n) * sizeof(float));
      model_->zero_gradients();
    }
    // Dropout masks follow the batch's place in the global batch, whoever trains it.
    const std::uint64_t slot = static_cast<std::uint64_t>(batch.first_mine + i);
    const nn::Dropout dropout{dropping ? o_.model.dropout : 0.0f, dropout_seed(o_.seed, progress_.step, slot),
                              dropping ? o_.model.activation_dropout : 0.0f};
    Transformer::GradientsFinal final;
    EmbeddingGradient apart{.lookups_apart = true, .output_part_final = {}};
    if (overlapped && i + 1 == batch.mine) {
      start_buckets(i > 0 ? gradient_sum_.data() : nullptr);
      final = [&](std::int64_t first) {
        const auto t0 = Clock::now();
        buckets->final_from(first);
        count_comm(t0);
      };
      apart.output_part_final = [&] {
        const auto t0 = Clock::now();
        buckets->final_apart();
        count_comm(t0);
      };
    }
    const LossSums s = model_->forward_backward(mine[static_cast<std::size_t>(i)], dropout,
                                                1.0f / static_cast<float>(batch.target_tokens), final, apart);
    lookups_->add_batch(model_->lookup_gradients());
    if (i > 0 && !buckets) be.accumulate(gradient_sum_.data(), model_->gradients(), n);
    window_loss_ += s.loss;
    window_nll_ += s.nll;
    loss += s.loss;
  }
  if (overlapped) {
    // What the backward pass did not hide: the sums still under way (all of them on a rank whose
    // share of the global batch was empty, which sends its zeros like the others), then the rows
    // the lookups touched.
    arrive_at_sum();
    const auto t0 = Clock::now();
    if (!buckets) start_buckets(nullptr);
    buckets->finish();
    lookups_->add_to(model_->gradients(), ranks_, wire());
    count_comm(t0);
  } else if (ranks_.size() == 1) {
    lookups_->add_to(model_->gradients(), ranks_, wire());
  }
  return loss;
}

void Trainer::Run::sum_across_ranks(double& loss) {
  if (ranks_.size() == 1) return;
  const bool after_backward = o_.allreduce != "overlapped";  // else summed (and arrived) during the backward pass
  if (after_backward) arrive_at_sum();
  const auto t0 = Clock::now();
  if (after_backward) {
    ranks_.sum(model_->gradients(), static_cast<std::size_t>(model_->parameter_count()), wire());
    lookups_->sum_rows(ranks_);
    lookups_->add_to(model_->gradients(), ranks_, wire());
  }
  // The loss, and each rank's compute time in its own slot (the others' are 0): every rank learns
  // them all. The loss's sum is the same as alone: the slots are summed element by element.
  std::vector<double> shared(1 + static_cast<std::size_t>(ranks_.size()), 0.0);
  shared[0] = loss;
  shared[1 + static_cast<std::size_t>(ranks_.rank())] = computed_;
  ranks_.sum(shared.data(), shared.size());
  loss = shared[0];
  count_comm(t0);
  time_split(std::span<const double>(shared).subspan(1));
}

void Trainer::Run::count_comm(Clock::time_point since) {
  const double seconds = std::chrono::duration<double>(Clock::now() - since).count();
  window_comm_ += seconds;
  comm_since_sync_ += seconds;
}

void Trainer::Run::arrive_at_sum() {
  faults_.before_sum();
  computed_ = std::chrono::duration<double>(Clock::now() - synced_).count() - comm_since_sync_;
}

// The update's time since the ranks left stop_reason's sum together, T, split for the progress
// window: the slowest rank computed max(c) of it; the rest, T - max(c), is communication that no
// rank's compute hid; a rank that computed c waited max(c) - c for the slowest, and the window counts
// the ranks' mean wait, max(c) - mean(c). (Compute, in the record, is the window's time less both.)
void Trainer::Run::time_split(std::span<const double> computed) {
  const double update = std::chrono::duration<double>(Clock::now() - synced_).count();
  const double slowest = *std::max_element(computed.begin(), computed.end());
  double mean = 0;
  for (const double c : computed) mean += c / static_cast<double>(computed.size());
  window_waiting_ += slowest - mean;
  window_unhidden_ += std::max(0.0, update - slowest);
}

// The gradient's L2 norm: a run whose norm or loss shows divergence stops here, before the update;
// above clip_norm, the scale that brings the norm down to it (Adam applies it).
float Trainer::Run::clip_scale(double loss_per_token) {
  const double norm = std::sqrt(model_->backend().sum_squares(model_->gradients(), model_->parameter_count()));
  check_divergence(norm, loss_per_token);
  if (o_.clip_norm > 0 && norm > o_.clip_norm) return static_cast<float>(o_.clip_norm / norm);
  return 1.0f;
}

void Trainer::Run::count_update(std::int64_t target_tokens) {
  ++progress_.step;
  progress_.target_tokens += target_tokens;
  window_tokens_ += target_tokens;
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
      std::snprintf(line, sizeof line, " | %d ranks, allreduce %.0f%% (not hidden %.0f%%, waiting %.0f%%)%s",
                    ranks_.size(), 100 * window_comm_ / secs, 100 * window_unhidden_ / secs,
                    100 * window_waiting_ / secs, wire() == dist::WirePrecision::bf16 ? " (bf16)" : "");
      log_ << line;
    }
    log_ << std::endl;
    if (leader()) {
      TrainRecord record;
      record.step = progress_.step;
      record.epoch = progress_.epoch + 1;
      record.loss = loss;
      record.ppl = ppl;
      record.lr = lr_;
      record.tokens_per_second = tps;
      record.target_tokens = progress_.target_tokens;
      record.elapsed_seconds = now;
      // The end the learning rate of this update was on the way to (lr_decay linear, time budget).
      if (decays_to_the_clock() && progress_.decay.end > 0) record.lr_decay_end = progress_.decay.end;
      if (ranks_.size() > 1) {
        record.ranks = ranks_.size();
        record.allreduce_seconds = window_comm_;
        record.communication_seconds = window_unhidden_;
        record.waiting_seconds = window_waiting_;
      }
      emit(record);
    }
    window_loss_ = window_nll_ = window_comm_ = window_unhidden_ = window_waiting_ = 0;
    window_tokens_ = 0;
    window_start_ = Clock::now();
  }

  if (!o_.valid_source.empty() && progress_.step % o_.valid_every == 0) {
    // Rank 0 validates; every rank learns the dev loss, so early stopping agrees everywhere.
    ValidationResult v;
    // With a moving average of the weights, the average is what is validated and delivered.
    if (leader()) adam_->with_average_weights([&] { v = validation_->run(*model_); });
    ranks_.broadcast(&v.cross_entropy, sizeof v.cross_entropy, 0);
    const bool best = v.cross_entropy < progress_.best_valid_loss;
    if (best) {
      progress_.best_valid_loss = v.cross_entropy;
      progress_.best_step = progress_.step;
      progress_.validations_without_improvement = 0;
      if (leader())
        adam_->with_average_weights([&] {
          save_model_directory(run_ / "best", *model_, *vocabulary_,
                               model_metadata({{"step", std::to_string(progress_.step)}}));
        });
    } else {
      ++progress_.validations_without_improvement;
    }
    if (leader()) {
      log_ << "valid step " << progress_.step << " | " << v.summary() << (best ? " | new best" : "") << std::endl;
      ValidRecord record = v.record();
      record.step = progress_.step;
      record.best = best;
      if (o_.ema_decay > 0) record.ema_decay = o_.ema_decay;  // the average was validated
      record.elapsed_seconds = elapsed();
      emit(record);
    }
    window_start_ = Clock::now();  // validation time is not training throughput
  }
  if (progress_.step == o_.warmup_steps || (progress_.step > o_.warmup_steps && progress_.step % o_.log_every == 0))
    estimate_decay_end();
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

// lr_decay linear under a time budget alone: the update at which the budget runs out, at this
// process's speed so far (its validations and checkpoints included), is where the learning rate
// reaches 0. Estimated at the end of the warmup, then again every log_every updates: a new estimate
// turns the line at this update and its learning rate, straight down to the new end, so the rate
// never jumps and the run ends annealed where its time ends, whether it slows down (a busy machine,
// longer validations) or speeds up. End and turn are kept in the checkpoints, so a resumed run goes
// on along the same line. Should the last stretch still be slower than estimated, the time budget
// ends the run just short of 0; faster, it stops at the end. Rank 0's clock decides, as for the
// budget itself.
void Trainer::Run::estimate_decay_end() {
  if (!decays_to_the_clock()) return;
  double estimate[2] = {0, 0};  // the end, and the updates per second it comes from (rank 0's)
  if (leader()) {
    const double seconds = elapsed() - start_elapsed_;
    estimate[1] = static_cast<double>(progress_.step - first_step_) / std::max(seconds, 1e-9);
    const double left = std::max(0.0, o_.time_budget_minutes * 60 - elapsed());
    estimate[0] = static_cast<double>(progress_.step) + std::max(1.0, std::floor(left * estimate[1]));
  }
  ranks_.sum(estimate, 2);
  const auto end = static_cast<std::int64_t>(estimate[0]);
  DecayLine& line = progress_.decay;
  if (end == line.end) return;
  const bool first = line.end == 0;
  if (progress_.step > o_.warmup_steps) {
    // The learning rate of the update just made, on the line (or the curve) it was on.
    line.from_fraction = schedule_.rate(progress_.step, line) / schedule_.peak();
    line.from = progress_.step;
  }
  line.end = end;
  // Said at the first estimate and at validations (where it is compared with the dev loss).
  if (!first && (o_.valid_source.empty() || progress_.step % o_.valid_every != 0)) return;
  log_ << "lr_decay linear: at " << estimate[1] << " updates/s the time budget ends near update " << end
       << (first ? "; the learning rate falls linearly to 0 there\n" : " (estimated again)\n");
}

// Every rank applied the same updates to the same weights, so the weights must be identical to
// the bit; checked whenever a checkpoint is written (a reduction that gave ranks different sums
// would otherwise let them drift apart silently).
void Trainer::Run::check_ranks_agree_on_weights() {
  if (ranks_.size() == 1) return;
  const std::string mine =
      to_hex(sha256(std::string_view(reinterpret_cast<const char*>(std::as_const(*model_).parameters()),
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

void Trainer::Run::save_snapshot(int minute) {
  const auto folder = run_ / "snapshots" / snapshot_name(minute);
  if (std::filesystem::exists(folder)) return;
  adam_->with_average_weights([&] {
    save_model_directory(
        folder, *model_, *vocabulary_,
        model_metadata({{"step", std::to_string(progress_.step)}, {"minutes", std::to_string(minute)}}));
  });
}

TrainResult Trainer::Run::finish(std::string stop_reason) {
  save();
  if (leader()) {
    // A linear decay to the clock ends the run at the update estimated to be its budget's last, which
    // may come a moment before the budget's minute: the run still stands for its whole budget.
    if (stop_reason == "time_budget" || stop_reason == "lr_decay_end")
      if (const int minute = budget_snapshot_minute(o_.time_budget_minutes, o_.snapshot_every_minutes); minute > 0)
        save_snapshot(minute);
    faults_.before_final_model();
    adam_->with_average_weights([&] {
      save_model_directory(run_ / "model", *model_, *vocabulary_,
                           model_metadata({{"step", std::to_string(progress_.step)}}));
    });
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
  Run run(options_, log_, *ranks_, TrainingFaults::from_environment(), resume, accept_changes);
  run.on_record = on_record_;
  std::string reason;
  while ((reason = run.stop_reason()).empty()) {
    if (run.update()) run.after_update();
  }
  return run.finish(std::move(reason));
}

}  // namespace attn
