#include "model/model_config.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/float_decimal.h"
#include "core/memory.h"
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
  if (!(activation_dropout >= 0 && activation_dropout < 1))
    throw Error("model config: activation_dropout must be in [0, 1)");
  if (attention_window < 0) throw Error("model config: attention_window must be >= 0 (0 = unrestricted)");
  if (sentence_tokens < 0 || sentence_tokens >= max_positions)
    throw Error("model config: sentence_tokens must be from 0 (not known) to max_positions - 1 (" +
                std::to_string(max_positions - 1) + "), got " + std::to_string(sentence_tokens));
  if (!(layernorm_eps > 0)) throw Error("model config: layernorm_eps must be positive");
  const double bytes = 4 * parameter_count();
  const double memory = physical_memory_bytes();
  if (bytes > memory) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "model config: these sizes make %.4g parameters: %.4g bytes for the weights alone, more than "
                  "this machine's memory (%.4g bytes)",
                  parameter_count(), bytes, memory);
    throw Error(text);
  }
}

double ModelConfig::parameter_count() const {
  const double d = d_model, ff = d_ff, hk = static_cast<double>(heads) * d_k, hv = static_cast<double>(heads) * d_v;
  const double attention = d * (2 * hk + hv) + (2 * hk + hv) + (hv * d + d);  // fused q,k,v + out_proj
  const double cross = (d * hk + hk) + (d * (hk + hv) + hk + hv) + (hv * d + d);
  const double ffn = (ff * d + ff) + (d * ff + d);
  const double norm = 2 * d;
  double n = static_cast<double>(vocab_size) * d;
  if (positions == PositionEncoding::Learned) n += 2.0 * max_positions * d;
  n += static_cast<double>(encoder_layers) * (attention + norm + ffn + norm);
  n += static_cast<double>(decoder_layers) * (attention + norm + cross + norm + ffn + norm);
  return n;
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
                     {"activation_dropout", float_decimal(c.activation_dropout)},
                     {"label_smoothing", float_decimal(c.label_smoothing)},
                     {"positions", position_name(c.positions)},
                     {"max_positions", c.max_positions},
                     {"attention_window", c.attention_window},
                     {"vocab_size", c.vocab_size},
                     {"layernorm_eps", float_decimal(c.layernorm_eps)}};
  if (c.sentence_tokens > 0) j["sentence_tokens"] = c.sentence_tokens;  // folders that do not know it stay as they were
}

namespace {

// The value of `key` (if present) as a whole number in [1 or 0, INT_MAX], a number, or one of
// some words; anything else names the key, what it accepts and what it got.
void read_int(const nlohmann::json& j, const char* key, int& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  const bool whole =
      v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9.2e18);
  if (!whole) throw Error(std::string("model config: '") + key + "' must be a whole number, got " + v.dump());
  const double x = v.is_number_unsigned()
                       ? static_cast<double>(v.get<std::uint64_t>())
                       : (v.is_number_integer() ? static_cast<double>(v.get<std::int64_t>()) : v.get<double>());
  if (x < -2147483648.0 || x > 2147483647.0)
    throw Error(std::string("model config: '") + key + "' must be a whole number from -2147483648 to 2147483647, got " +
                v.dump());
  out = static_cast<int>(x);
}

void read_float(const nlohmann::json& j, const char* key, float& out) {
  if (!j.contains(key)) return;
  const auto& v = j.at(key);
  if (!v.is_number()) throw Error(std::string("model config: '") + key + "' must be a number, got " + v.dump());
  // Beyond float's range the value would become infinite (and be saved as null).
  if (!(std::fabs(v.get<double>()) <= std::numeric_limits<float>::max()))
    throw Error(std::string("model config: '") + key + "' must be a number a float holds, got " + v.dump());
  out = v.get<float>();
}

}  // namespace

void from_json(const nlohmann::json& j, ModelConfig& c) {
  if (!j.is_object()) throw Error("model config must be a JSON object");
  static const std::set<std::string> known{"preset",
                                           "encoder_layers",
                                           "decoder_layers",
                                           "layers",
                                           "d_model",
                                           "d_ff",
                                           "heads",
                                           "d_k",
                                           "d_v",
                                           "dropout",
                                           "activation_dropout",
                                           "label_smoothing",
                                           "positions",
                                           "max_positions",
                                           "attention_window",
                                           "vocab_size",
                                           "layernorm_eps",
                                           "sentence_tokens"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) throw Error("model config: unknown key '" + it.key() + "'");
  std::string preset = "base";
  if (j.contains("preset")) {
    if (!j.at("preset").is_string())
      throw Error("model config: 'preset' must be one of \"base\", \"big\", \"small\", \"tiny\", got " +
                  j.at("preset").dump());
    preset = j.at("preset").get<std::string>();
  }
  c = ModelConfig::preset(preset);
  read_int(j, "layers", c.encoder_layers);
  read_int(j, "layers", c.decoder_layers);
  read_int(j, "encoder_layers", c.encoder_layers);
  read_int(j, "decoder_layers", c.decoder_layers);
  read_int(j, "d_model", c.d_model);
  read_int(j, "d_ff", c.d_ff);
  read_int(j, "heads", c.heads);
  read_int(j, "d_k", c.d_k);
  read_int(j, "d_v", c.d_v);
  read_float(j, "dropout", c.dropout);
  read_float(j, "activation_dropout", c.activation_dropout);
  read_float(j, "label_smoothing", c.label_smoothing);
  read_int(j, "max_positions", c.max_positions);
  read_int(j, "attention_window", c.attention_window);
  read_int(j, "vocab_size", c.vocab_size);
  read_float(j, "layernorm_eps", c.layernorm_eps);
  read_int(j, "sentence_tokens", c.sentence_tokens);
  if (j.contains("positions")) {
    const auto& p = j.at("positions");
    if (p == "sinusoidal")
      c.positions = PositionEncoding::Sinusoidal;
    else if (p == "learned")
      c.positions = PositionEncoding::Learned;
    else
      throw Error("model config: 'positions' must be \"sinusoidal\" or \"learned\", got " + p.dump());
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
