#pragma once
// Where a layer applies dropout: the rate and a seed from which each site derives its own stream.
#include <cstdint>

#include "core/seed.h"

namespace attn::nn {

struct Dropout {
  float rate = 0;          // 0 in evaluation and decoding
  std::uint64_t seed = 0;  // per step (and per micro-batch)
  std::uint64_t site(std::uint64_t id) const { return derive_seed(seed, id); }
};

}  // namespace attn::nn
