#pragma once
// The lookups' part of the shared embedding's gradient (Transformer::EmbeddingGradient), summed
// over an update's batches and ranks apart from the rest of the gradient. The output layer's part
// covers every row of the vocabulary and is done as soon as the backward pass has left the output
// layer, so its sum across ranks hides behind the whole backward pass; the lookups' part is done
// only at the pass's very end (the source's embedding is the last thing it reaches), but touches
// only the rows the update's batches look up (a fifth of an 8000-piece vocabulary for 2 x 2048
// tokens): only those rows are summed then. The embedding's gradient is the sum of the two sums,
// so N ranks of one batch still compute what one process accumulating the N batches computes, to
// the bit: every batch's lookups are added, from zero, to a sum of their own, in the order of the
// batches, over the rows of every batch so far (a row another batch looks up gets its zero added,
// as the ranks' sum adds it).
#include <cstdint>
#include <span>
#include <vector>

#include "core/token_batch.h"
#include "kernels/backend.h"
#include "kernels/device_buffer.h"
#include "train/dist/communicator.h"

namespace attn {

class LookupGradientSum {
 public:
  LookupGradientSum(Backend& backend, int vocab, int dim);
  // Before the update's batches: the rows this rank's batches look up (their sources and the
  // decoder's inputs, padding included).
  void begin_update(std::span<const TokenBatch> batches);
  // After each batch's backward pass: its lookups' gradient [vocab, dim] (zero outside its rows)
  // added to the sum, then zeroed for the next batch.
  void add_batch(float* lookups);
  // Several ranks: the rows any rank looks up, summed across the ranks as flags. start_rows: without
  // waiting (Communicator::start_sum, before the update's other sums start), sum_rows: at once.
  void start_rows(dist::Communicator& ranks);
  void sum_rows(dist::Communicator& ranks);
  // The sum over the ranks of those rows (with one rank, none is needed), added to the embedding's
  // gradient [vocab, dim]; the sum is zero again afterwards. With several ranks, after the rows'
  // sum is done.
  void add_to(float* embedding_grads, dist::Communicator& ranks, dist::WirePrecision wire);

  std::int64_t rows() const;  // rows this rank's batches of the update look up

 private:
  // Consecutive runs [first, end) of the rows flagged (> 0).
  std::vector<std::pair<std::int32_t, std::int32_t>> runs(const std::vector<float>& flags) const;

  Backend& backend_;
  int vocab_, dim_;
  DeviceBuffer<float> sum_;
  std::vector<float> mine_;    // [vocab]: 1 where this rank's batches of the update look a row up, else 0
  std::vector<float> all_;     // the same over all ranks (mine_ summed across them): a sum's buffer
  bool summed_ = false;        // all_ holds (or, started, will hold) this update's rows
  std::vector<float> packed_;  // the rows, one after the other, as they travel
};

}  // namespace attn
