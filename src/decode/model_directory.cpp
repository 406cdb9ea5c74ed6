#include "decode/model_directory.h"

#include <algorithm>
#include <cctype>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/safetensors.h"

namespace attn {

void save_model_directory(const std::filesystem::path& dir, const Transformer& model,
                          const data::Vocabulary& vocabulary, const std::map<std::string, std::string>& metadata) {
  std::filesystem::create_directories(dir);
  model.save_parameters(dir / "model.safetensors", metadata);
  save_model_config((dir / "config.json").string(), model.config());
  write_file_atomic(dir / "vocab.model", vocabulary.model_bytes());
}

bool is_language_code(std::string_view code) {
  if (code.empty() || code.size() > 32 || !std::isalpha(static_cast<unsigned char>(code.front()))) return false;
  return std::all_of(code.begin(), code.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void add_languages(std::map<std::string, std::string>& metadata, const ModelLanguages& languages) {
  if (!languages.known()) return;
  metadata["attn.source_lang"] = languages.source;
  metadata["attn.target_lang"] = languages.target;
}

namespace {

ModelLanguages languages_of(const SafetensorsFile& file) {
  ModelLanguages l;
  const auto& meta = file.metadata();
  const auto source = meta.find("attn.source_lang"), target = meta.find("attn.target_lang");
  if (source == meta.end() || target == meta.end()) return l;
  for (const auto* it : {&source, &target})
    if (!is_language_code((*it)->second))
      throw_in(file.path(), "metadata " + (*it)->first + " \"" + (*it)->second + "\" is not a language code");
  l.source = source->second;
  l.target = target->second;
  return l;
}

}  // namespace

ModelLanguages read_model_languages(const std::filesystem::path& dir) {
  return languages_of(SafetensorsFile(dir / "model.safetensors", /*header_only=*/true));
}

std::optional<LoadPrecision> parse_load_precision(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name == "fp32") return LoadPrecision{WeightFormat::f32, MatmulPrecision::fp32};
  if (name == "bf16") return LoadPrecision{WeightFormat::f32, MatmulPrecision::bf16};
  if (name == "int8") return LoadPrecision{WeightFormat::int8, MatmulPrecision::fp32};
  throw Error("unknown precision '" + name + "' (expected fp32, bf16 or int8)");
}

LoadedModel load_model_directory(const std::filesystem::path& dir, const std::string& precision) {
  std::optional<LoadPrecision> wanted = parse_load_precision(precision);
  if (!std::filesystem::is_directory(dir)) throw_in(dir.string(), "no such model folder");
  for (const char* f : {"model.safetensors", "config.json", "vocab.model"})
    if (!std::filesystem::exists(dir / f))
      throw_in(dir.string(), std::string("not a model folder: ") + f + " is missing");
  LoadedModel m;
  const ModelConfig config = load_model_config((dir / "config.json").string());
  m.vocabulary = std::make_unique<data::Vocabulary>(data::Vocabulary::load(dir / "vocab.model"));
  if (m.vocabulary->size() != config.vocab_size)
    throw_in((dir / "config.json").string(), "vocab_size " + std::to_string(config.vocab_size) +
                                                 " does not match vocab.model's " +
                                                 std::to_string(m.vocabulary->size()) + " pieces");
  const SafetensorsFile file(dir / "model.safetensors", /*header_only=*/true);
  m.languages = languages_of(file);
  if (!wanted) {  // as the file is: its metadata says so (attn writes it), else its embedding's dtype
    const auto it = file.metadata().find("attn.weights");
    const bool int8 = it != file.metadata().end()
                          ? it->second == "int8"
                          : file.contains("embedding.weight") && file.dtype("embedding.weight") == "I8";
    wanted = LoadPrecision{int8 ? WeightFormat::int8 : WeightFormat::f32, MatmulPrecision::fp32};
  }
  m.model = std::make_unique<Transformer>(config, cpu_backend(wanted->products), wanted->weights);
  m.model->load_parameters(dir / "model.safetensors");
  return m;
}

}  // namespace attn
