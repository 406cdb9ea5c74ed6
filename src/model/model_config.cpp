#include "model/model_config.h"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/float_decimal.h"
#include "core/json_file.h"

namespace attn {

ModelConfig ModelConfig::preset(std::string_view name) {
  ModelConfig c;  // defaults are the paper's base model
  if (name == "base") return c;
  if (name == "big") {
    c.d_model = 1024, c.d_ff = 4096, c.heads = 16, c.dropout = 0.3f;
    return c;
  }
  if (name == "small") {
    c.encoder_layers = c.decoder_layers = 3;
    c.d_model = 256, c.d_ff = 1024, c.heads = 4;
    return c;
  }
  if (name == "tiny") {
    c.encoder_layers = c.decoder_layers = 2;
    c.d_model = 32, c.d_ff = 64, c.heads = 4, c.d_k = c.d_v = 8;
    c.max_positions = 256;
    c.vocab_size = 64;
    return c;
  }
  throw Error("unknown model preset '" + std::string(name) + "' (known: base, big, small, tiny)");
}

std::vector<std::string> ModelConfig::preset_names() { return {"base", "big", "small", "tiny"}; }

void ModelConfig::validate() const {
  auto positive = [](int v, const char* name) {
    if (v <= 0) throw Error(std::string("model config: ") + name + " must be positive, got " + std::to_string(v));
  };
  positive(encoder_layers, "encoder_layers");
  positive(decoder_layers, "decoder_layers");
  positive(d_model, "d_model");
  positive(d_ff, "d_ff");
  positive(heads, "heads");
  positive(d_k, "d_k");
  positive(d_v, "d_v");
  positive(max_positions, "max_positions");
  positive(vocab_size, "vocab_size");
  if (vocab_size < 4) throw Error("model config: vocab_size must hold at least the 4 special ids");
  if (!(dropout >= 0 && dropout < 1)) throw Error("model config: dropout must be in [0, 1)");
  if (!(label_smoothing >= 0 && label_smoothing < 1)) throw Error("model config: label_smoothing must be in [0, 1)");
  if (attention_window < 0) throw Error("model config: attention_window must be >= 0 (0 = unrestricted)");
  if (!(layernorm_eps > 0)) throw Error("model config: layernorm_eps must be positive");
}

static const char* position_name(PositionEncoding p) {
  return p == PositionEncoding::Learned ? "learned" : "sinusoidal";
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
  j = nlohmann::json{{"encoder_layers", c.encoder_layers},
                     {"decoder_layers", c.decoder_layers},
                     {"d_model", c.d_model},
                     {"d_ff", c.d_ff},
                     {"heads", c.heads},
                     {"d_k", c.d_k},
                     {"d_v", c.d_v},
                     {"dropout", float_decimal(c.dropout)},
                     {"label_smoothing", float_decimal(c.label_smoothing)},
                     {"positions", position_name(c.positions)},
                     {"max_positions", c.max_positions},
                     {"attention_window", c.attention_window},
                     {"vocab_size", c.vocab_size},
                     {"layernorm_eps", float_decimal(c.layernorm_eps)}};
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
  if (!j.is_object()) throw Error("model config must be a JSON object");
  c = ModelConfig::preset(j.value("preset", std::string("base")));
  static const std::set<std::string> known{"preset", "encoder_layers", "decoder_layers", "layers", "d_model",
                                           "d_ff", "heads", "d_k", "d_v", "dropout", "label_smoothing",
                                           "positions", "max_positions", "attention_window", "vocab_size",
                                           "layernorm_eps"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) throw Error("model config: unknown key '" + it.key() + "'");
  try {
    if (j.contains("layers")) c.encoder_layers = c.decoder_layers = j.at("layers").get<int>();
    c.encoder_layers = j.value("encoder_layers", c.encoder_layers);
    c.decoder_layers = j.value("decoder_layers", c.decoder_layers);
    c.d_model = j.value("d_model", c.d_model);
    c.d_ff = j.value("d_ff", c.d_ff);
    c.heads = j.value("heads", c.heads);
    c.d_k = j.value("d_k", c.d_k);
    c.d_v = j.value("d_v", c.d_v);
    c.dropout = j.value("dropout", c.dropout);
    c.label_smoothing = j.value("label_smoothing", c.label_smoothing);
    c.max_positions = j.value("max_positions", c.max_positions);
    c.attention_window = j.value("attention_window", c.attention_window);
    c.vocab_size = j.value("vocab_size", c.vocab_size);
    c.layernorm_eps = j.value("layernorm_eps", c.layernorm_eps);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("model config: wrong type: ") + e.what());
  }
  if (j.contains("positions")) {
    const std::string p = j.at("positions").get<std::string>();
    if (p == "sinusoidal") c.positions = PositionEncoding::Sinusoidal;
    else if (p == "learned") c.positions = PositionEncoding::Learned;
    else throw Error("model config: positions must be 'sinusoidal' or 'learned', got '" + p + "'");
  }
  c.validate();
}

ModelConfig load_model_config(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "model config");
  try {
    return j.get<ModelConfig>();
  } catch (const Error& e) {
    throw_in(path, e.what());
  }
}

void save_model_config(const std::string& path, const ModelConfig& c) {
  write_file_atomic(path, nlohmann::json(c).dump(2) + "\n");
}

}  // namespace attn
