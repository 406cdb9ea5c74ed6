#pragma once
// A model folder, what `attn translate --model DIR` reads: model.safetensors (the weights,
// docs/model-format.md), config.json (the model configuration) and vocab.model (the SentencePiece
// vocabulary). Every file is written atomically.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "data/vocabulary.h"
#include "model/transformer.h"

namespace attn {

void save_model_directory(const std::filesystem::path& dir, const Transformer& model,
                          const data::Vocabulary& vocabulary, const std::map<std::string, std::string>& metadata = {});

struct LoadedModel {
  std::unique_ptr<Transformer> model;
  std::unique_ptr<data::Vocabulary> vocabulary;
};

// Throws Error naming the missing or inconsistent file.
LoadedModel load_model_directory(const std::filesystem::path& dir, Backend& backend = cpu_backend());

}  // namespace attn
