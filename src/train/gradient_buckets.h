#pragma once
// The gradient summed across ranks while the backward pass is still running (as PyTorch's DDP
// does): each part of the gradient buffer the backward pass has finished (Transformer::GradientsFinal:
// the layers from the buffer's end, the last decoder layer first) is sent at once, in sums of at
// most a bucket each, so that communication hides behind the layers still to compute. A bucket
// never waits for a layer not yet done: what waits for the backward pass's end is the first
// encoder layer alone (and the shared embedding's lookups, train/lookup_gradient_sum.h).
#include <cstdint>

#include "kernels/backend.h"
#include "train/dist/communicator.h"

namespace attn {

class GradientBuckets {
 public:
  // grads [n]: the buffer to sum in place; bucket_floats > 0: the most floats one sum holds. Where
  // earlier is given, each part first gets earlier's part added (grads += earlier: the gradient of
  // this rank's earlier batches of the update, in the order the accumulation adds them), then goes
  // out. wire: how each part travels (dist::WirePrecision). apart_end > 0: grads[0, apart_end) is
  // done before the rest (the shared embedding's output layer part, EmbeddingGradient), and goes
  // when final_apart() is called.
  GradientBuckets(dist::Communicator& ranks, Backend& backend, float* grads, std::int64_t n, std::int64_t bucket_floats,
                  dist::WirePrecision wire, const float* earlier = nullptr, std::int64_t apart_end = 0);
  // The backward pass is done with grads[0, apart_end): starts its sums.
  void final_apart();
  // The backward pass is done with grads[first, n): starts the sums of what in it has not gone yet
  // (and of [0, apart_end) where first is 0).
  void final_from(std::int64_t first);
  // Starts what is left and waits for every sum: grads holds the sum over the ranks.
  void finish();
  int sums() const { return sums_; }  // sums started so far

  // The bucket size in floats for a size in MB (2^20 bytes), at least one float.
  static std::int64_t floats_of_mb(double mb);

 private:
  void start_range(std::int64_t begin, std::int64_t end);

  dist::Communicator& ranks_;
  Backend& backend_;
  float* grads_;
  std::int64_t n_, bucket_, apart_end_;
  std::int64_t started_from_;  // grads[started_from_, n) has gone
  bool apart_started_ = false;
  dist::WirePrecision wire_;
  const float* earlier_;
  int sums_ = 0;
};

}  // namespace attn
