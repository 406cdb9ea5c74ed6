#pragma once
// Where a layer applies dropout: the rate and a seed from which each site derives its own stream.
#include <cstdint>

#include "core/seed.h"

namespace attn::nn {

struct Dropout {
  float rate = 0;          // sublayer outputs and embeddings; 0 in evaluation and decoding
  std::uint64_t seed = 0;  // per step (and per micro-batch)
  float activation = 0;    // the feed-forward layer's hidden ReLU output; 0 in evaluation and decoding
  std::uint64_t site(std::uint64_t id) const { return derive_seed(seed, id); }
};

// A layer's sites are its dropout_site plus 0, 1 (2) for its sublayers' outputs and this one for
// the feed-forward hidden layer.
inline constexpr std::uint64_t kFeedForwardHiddenSite = 8;

}  // namespace attn::nn
