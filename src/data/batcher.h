#pragma once
// Batches the paper's way (section 5.1): sentence pairs grouped by similar length, each batch
// holding up to batch_tokens source tokens and batch_tokens target tokens, padding included: a
// batch of n pairs costs n x (longest source) on one side and n x (longest target) on the other,
// and both must be within the budget.
//
// Each epoch, pairs are sorted by length with ties broken at random, cut greedily into batches,
// and the batches put in random order. Only pairs of equal lengths trade places, so every epoch
// has the same number of batches of the same shapes; which pairs share a batch, and the order,
// change. Everything derives from (seed, epoch) alone, through a
// fixed generator (not std::shuffle, whose results differ between standard libraries) and on one
// thread: the same seed and epoch give the same batches on any machine and with any number of
// threads, so training can resume at (epoch, batch index).
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "data/batch.h"
#include "data/parallel_corpus.h"

namespace attn::data {

struct BatchingOptions {
  std::size_t batch_tokens = 25000;  // per side, padding included (the paper: ~25000 + 25000)
  std::uint64_t seed = 1;
};

// The batches of one epoch, in training order.
class EpochBatches {
 public:
  std::size_t size() const { return ranges_.size(); }
  // Indices into the corpus (ParallelCorpus::source(i) ...) of the pairs of batch k.
  std::span<const std::uint32_t> pairs(std::size_t k) const {
    return std::span<const std::uint32_t>(pairs_).subspan(ranges_[k].first, ranges_[k].second - ranges_[k].first);
  }

 private:
  friend class Batcher;
  std::vector<std::uint32_t> pairs_;                             // grouped by batch
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges_;  // [begin, end) in pairs_, training order
};

// How full the batches of an epoch are. A slot is one entry of src (source side) or of tgt_out
// (target side); padding is the fraction of slots holding kPadId.
struct BatchingStatistics {
  std::size_t batches = 0;
  std::size_t pairs = 0;
  std::size_t source_tokens = 0, source_slots = 0;  // EOS counted as a token
  std::size_t target_tokens = 0, target_slots = 0;
  std::size_t largest_batch = 0;  // pairs

  double source_padding() const { return fraction(source_slots - source_tokens, source_slots); }
  double target_padding() const { return fraction(target_slots - target_tokens, target_slots); }
  double padding() const {
    return fraction(source_slots + target_slots - source_tokens - target_tokens, source_slots + target_slots);
  }

 private:
  static double fraction(std::size_t part, std::size_t whole) { return whole ? double(part) / double(whole) : 0.0; }
};

class Batcher {
 public:
  // Throws Error if a single pair does not fit in batch_tokens (raise batch_tokens or lower
  // ParallelCorpusOptions::max_tokens), so that no pair is ever left out. The corpus must
  // outlive the batcher.
  Batcher(const ParallelCorpus& corpus, BatchingOptions options);

  // The batches of `epoch`; every kept pair is in exactly one of them. Thread-safe.
  EpochBatches epoch(std::uint64_t epoch) const;

  // Lays out the pairs of one batch (see batch.h). Reuses the batch's buffers, so a batch object
  // kept across steps stops allocating once it has held the largest batch. Thread-safe.
  void fill(std::span<const std::uint32_t> pairs, Batch& batch) const;

  BatchingStatistics statistics(const EpochBatches& batches) const;

  // The target tokens of a batch of these pairs (Batch::target_tokens after fill), without filling it.
  std::size_t target_tokens(std::span<const std::uint32_t> pairs) const {
    std::size_t n = 0;
    for (const std::uint32_t pair : pairs) n += target_cost(pair);
    return n;
  }

  const BatchingOptions& options() const { return options_; }

 private:
  std::size_t source_cost(std::uint32_t pair) const { return corpus_.source_length(pair) + 1; }  // + EOS
  std::size_t target_cost(std::uint32_t pair) const { return corpus_.target_length(pair) + 1; }  // + BOS or EOS

  const ParallelCorpus& corpus_;
  BatchingOptions options_;
};

}  // namespace attn::data
