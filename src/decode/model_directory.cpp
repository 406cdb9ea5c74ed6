#include "decode/model_directory.h"

#include "core/atomic_file.h"
#include "core/error.h"

namespace attn {

void save_model_directory(const std::filesystem::path& dir, const Transformer& model,
                          const data::Vocabulary& vocabulary, const std::map<std::string, std::string>& metadata) {
  std::filesystem::create_directories(dir);
  model.save_parameters(dir / "model.safetensors", metadata);
  save_model_config((dir / "config.json").string(), model.config());
  write_file_atomic(dir / "vocab.model", vocabulary.model_bytes());
}

LoadedModel load_model_directory(const std::filesystem::path& dir, Backend& backend) {
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
  m.model = std::make_unique<Transformer>(config, backend);
  m.model->load_parameters(dir / "model.safetensors");
  return m;
}

}  // namespace attn
