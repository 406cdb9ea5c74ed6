#pragma once
// Validation on the dev set: cross-entropy and perplexity per target subword token (teacher
// forcing, no dropout), and BLEU/chrF of greedy translations of the first dev sentences, scored
// by the same code as `attn bleu`.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "data/parallel_corpus.h"
#include "model/transformer.h"
#include "train/train_log.h"
#include "train/train_options.h"

namespace attn {

struct ValidationResult {
  double loss = 0;           // label-smoothed, per target token
  double cross_entropy = 0;  // nats per target token
  double perplexity = 0;     // exp(cross_entropy)
  std::int64_t tokens = 0;
  std::optional<double> bleu, chrf;
  int translated = 0;
  double seconds = 0;

  std::string summary() const;
  // Its record in train.jsonl, but for what the training loop knows: step, best, ema_decay, time.
  ValidRecord record() const;
};

class Validation {
 public:
  Validation(const TrainOptions& options, const data::Vocabulary& vocabulary, const std::filesystem::path& cache_dir,
             std::ostream& log);
  ValidationResult run(Transformer& model);

 private:
  const data::Vocabulary& vocabulary_;
  data::ParallelCorpus corpus_;
  std::unique_ptr<data::Batcher> batcher_;
  data::EpochBatches batches_;
  data::Batch batch_;
  std::vector<std::string> sources_, references_;  // raw text of the sentences translated
};

}  // namespace attn
