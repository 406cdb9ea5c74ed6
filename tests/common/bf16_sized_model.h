#pragma once
// A model and a batch just large enough for every weight's products to run in bf16 on the bf16
// backend (which runs products with a side under 128 in float32): d_model, d_ff, the vocabulary and
// each side's rows (8 ragged sentences of up to 19 or 18 tokens plus EOS) at least 128.
#include <cstdint>
#include <vector>

#include "common/toy_batch.h"
#include "model/model_config.h"

namespace attn::testing {

inline ModelConfig bf16_sized_config(int layers) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.d_model = 128, c.d_ff = 256, c.heads = 4, c.d_k = c.d_v = 32, c.vocab_size = 160;
  c.encoder_layers = c.decoder_layers = layers;
  c.dropout = 0.1f;
  return c;
}

inline ToyBatch bf16_sized_batch() {
  std::vector<std::vector<std::int32_t>> sources, targets;
  for (int s = 0; s < 8; ++s) {
    sources.emplace_back(), targets.emplace_back();
    for (int t = 0; t < 19 - s % 3; ++t) sources.back().push_back(4 + (s * 7 + t * 5) % 150);
    for (int t = 0; t < 18 - s % 4; ++t) targets.back().push_back(4 + (s * 11 + t * 3) % 150);
  }
  return ToyBatch(sources, targets);
}

}  // namespace attn::testing
