#pragma once
// Every knob of the paper's Table 3, plus what a real system needs around them.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attn {

enum class PositionEncoding { Sinusoidal, Learned };

struct ModelConfig {
  int encoder_layers = 6;  // N
  int decoder_layers = 6;  // N
  int d_model = 512;
  int d_ff = 2048;
  int heads = 8;  // h
  int d_k = 64;
  int d_v = 64;
  float dropout = 0.1f;          // P_drop: sublayer outputs and embedding + position sums
  float activation_dropout = 0;  // dropout on the feed-forward layer's hidden ReLU output (fairseq's
                                 // activation_dropout, tensor2tensor's relu_dropout; not in the paper)
  float label_smoothing = 0.1f;  // ε_ls
  PositionEncoding positions = PositionEncoding::Sinusoidal;
  int max_positions = 1024;  // longest sequence, BOS/EOS included
  int attention_window = 0;  // restricted self-attention (section 4): r > 0 sees |i - j| <= r
  int vocab_size = 8000;     // the shared source/target vocabulary
  float layernorm_eps = 1e-5f;
  // Not a knob: what the model was trained on. The source length, in vocabulary pieces, that 4 in 5
  // of the training pairs' sources do not exceed (attn train records it; 0: not known). Translating
  // a document, a sentence longer than this is cut at a clause boundary (docs/documents.md).
  int sentence_tokens = 0;

  // Presets: "base" and "big" (Table 3), "small" (trains well on a 2-core machine), "tiny" (tests).
  static ModelConfig preset(std::string_view name);
  static std::vector<std::string> preset_names();

  // Throws Error naming the first inconsistent value, or the bytes the weights would need when
  // they exceed this machine's memory (checked before anything is allocated).
  void validate() const;

  // The number of parameters these sizes make (as ParameterLayout lays them out), in double so
  // that absurd sizes cannot overflow.
  double parameter_count() const;

  int qkv_width() const { return 2 * heads * d_k + heads * d_v; }
};

void to_json(nlohmann::json& j, const ModelConfig& c);
// Missing keys keep the defaults of `c`'s preset ("preset" key) or of base; unknown keys are errors.
void from_json(const nlohmann::json& j, ModelConfig& c);

ModelConfig load_model_config(const std::string& path);
void save_model_config(const std::string& path, const ModelConfig& c);

}  // namespace attn
