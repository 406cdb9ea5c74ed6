#pragma once
// The gradient summed across ranks while the backward pass is still running (as PyTorch's DDP
// does): the gradient buffer is cut into buckets from its end, where the backward pass finishes
// first (Transformer::GradientsFinal), and each bucket's sum starts as soon as the backward pass
// has finished all of it, so that communication hides behind the layers still to compute.
#include <cstdint>

#include "kernels/backend.h"
#include "train/dist/communicator.h"

namespace attn {

class GradientBuckets {
 public:
  // grads [n]: the buffer to sum in place; bucket_floats > 0 floats a bucket (the first bucket,
  // at the buffer's start, takes what is left). Where earlier is given, each bucket first gets
  // earlier's part added (grads += earlier: the gradient of this rank's earlier batches of the
  // update, in the order the accumulation adds them), then goes out.
  // wire: how each bucket travels (dist::WirePrecision).
  GradientBuckets(dist::Communicator& ranks, Backend& backend, float* grads, std::int64_t n, std::int64_t bucket_floats,
                  dist::WirePrecision wire, const float* earlier = nullptr);
  // The backward pass is done with grads[first, n): starts the sum of every bucket inside that
  // range not yet started.
  void final_from(std::int64_t first);
  // Starts what is left and waits for every sum: grads holds the sum over the ranks.
  void finish();
  int buckets() const;

  // The bucket size in floats for a size in MB (2^20 bytes), at least one float.
  static std::int64_t floats_of_mb(double mb);

 private:
  void start(int bucket);
  std::int64_t bucket_begin(int bucket) const;  // bucket 0 ends the buffer

  dist::Communicator& ranks_;
  Backend& backend_;
  float* grads_;
  std::int64_t n_, bucket_;
  dist::WirePrecision wire_;
  const float* earlier_;
  int started_ = 0;  // buckets 0 .. started_ - 1 are under way or done
};

}  // namespace attn
