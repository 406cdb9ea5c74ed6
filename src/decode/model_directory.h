#pragma once
// A model folder, what `attn translate --model DIR` reads: model.safetensors (the weights,
// docs/model-format.md), config.json (the model configuration) and vocab.model (the SentencePiece
// vocabulary). Every file is written atomically.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "data/vocabulary.h"
#include "model/transformer.h"

namespace attn {

void save_model_directory(const std::filesystem::path& dir, const Transformer& model,
                          const data::Vocabulary& vocabulary, const std::map<std::string, std::string>& metadata = {});

// The languages a model translates between, as their codes ("en", "es"); both empty where the
// folder does not say (folders written before attn recorded them). Kept in model.safetensors'
// metadata as attn.source_lang and attn.target_lang.
struct ModelLanguages {
  std::string source, target;
  bool known() const { return !source.empty() && !target.empty(); }
};
// A language code as attn records and serves it: letters, digits or _, starting with a letter, at
// most 32 characters (no "-": `attn serve --model SRC-TGT=DIR` separates the two by it).
bool is_language_code(std::string_view code);
// Adds the languages to the metadata of a model folder about to be saved (nothing when unknown).
void add_languages(std::map<std::string, std::string>& metadata, const ModelLanguages& languages);
// Reads them back from DIR/model.safetensors' header. Throws Error naming the file if it is not one.
ModelLanguages read_model_languages(const std::filesystem::path& dir);

struct LoadedModel {
  std::unique_ptr<Transformer> model;
  std::unique_ptr<data::Vocabulary> vocabulary;
  ModelLanguages languages;
};

// What to run a loaded model in (`--precision`):
//   "" (the default): as its file is: an int8 model.safetensors loads as int8, a float32 one as fp32;
//   "fp32": float32 weights and products (an int8 file's matrices become scale · q);
//   "bf16": float32 weights, matrix products in bf16 (needs a CPU with AVX512-BF16);
//   "int8": int8 matrices (a float32 file is quantized as it loads, as `attn quantize` would).
// Throws Error on any other name.
struct LoadPrecision {
  WeightFormat weights = WeightFormat::f32;
  MatmulPrecision products = MatmulPrecision::fp32;
};
std::optional<LoadPrecision> parse_load_precision(const std::string& name);

// Throws Error naming the missing or inconsistent file.
LoadedModel load_model_directory(const std::filesystem::path& dir, const std::string& precision = "");

}  // namespace attn
