#pragma once
// A randomly initialised `tiny` model over a small vocabulary trained on the fixtures, for decode
// tests that need a model but not a trained one.
#include <filesystem>
#include <memory>

#include "data/data_test_support.h"
#include "decode/model_directory.h"

namespace attn::testing {

// The vocabulary (400 pieces) is trained into `dir`; dropout 0; weights from `seed`.
inline LoadedModel random_tiny_model(const std::filesystem::path& dir, int max_positions, std::uint64_t seed) {
  LoadedModel loaded;
  loaded.vocabulary = std::make_unique<data::Vocabulary>(data::Vocabulary::load(train_fixture_vocabulary(dir, 400)));
  ModelConfig config = ModelConfig::preset("tiny");
  config.dropout = 0;
  config.vocab_size = loaded.vocabulary->size();
  config.max_positions = max_positions;
  loaded.model = std::make_unique<Transformer>(config);
  loaded.model->initialize(seed);
  return loaded;
}

}  // namespace attn::testing
