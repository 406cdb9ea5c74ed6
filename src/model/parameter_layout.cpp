#include "model/parameter_layout.h"

#include "core/error.h"

namespace attn {

ParameterLayout::ParameterLayout(const ModelConfig& c) {
  const std::int64_t d = c.d_model, hk = static_cast<std::int64_t>(c.heads) * c.d_k,
                     hv = static_cast<std::int64_t>(c.heads) * c.d_v;
  add("embedding.weight", {c.vocab_size, d}, InitKind::EmbeddingNormal);
  if (c.positions == PositionEncoding::Learned) {
    add("encoder.positions.weight", {c.max_positions, d}, InitKind::EmbeddingNormal);
    add("decoder.positions.weight", {c.max_positions, d}, InitKind::EmbeddingNormal);
  }
  // Projections that one product computes together are stored next to each other: first the
  // weights, then the biases, so that [W_q; W_k; W_v] is one [2·h·d_k + h·d_v, d] matrix.
  auto add_fused = [&](const std::string& prefix, const std::vector<std::pair<std::string, std::int64_t>>& parts) {
    for (const auto& [name, rows] : parts) add(prefix + name + ".weight", {rows, d}, InitKind::XavierUniform, d, rows);
    for (const auto& [name, rows] : parts) add(prefix + name + ".bias", {rows}, InitKind::Zeros);
  };
  for (int i = 0; i < c.encoder_layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    add_fused(p + "self_attn.", {{"q_proj", hk}, {"k_proj", hk}, {"v_proj", hv}});
    add_linear(p + "self_attn.out_proj", d, hv);
    add_norm(p + "self_attn_norm", d);
    add_linear(p + "ffn.fc1", c.d_ff, d);
    add_linear(p + "ffn.fc2", d, c.d_ff);
    add_norm(p + "ffn_norm", d);
  }
  for (int i = 0; i < c.decoder_layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i) + ".";
    add_fused(p + "self_attn.", {{"q_proj", hk}, {"k_proj", hk}, {"v_proj", hv}});
    add_linear(p + "self_attn.out_proj", d, hv);
    add_norm(p + "self_attn_norm", d);
    add_fused(p + "cross_attn.", {{"q_proj", hk}});
    add_fused(p + "cross_attn.", {{"k_proj", hk}, {"v_proj", hv}});
    add_linear(p + "cross_attn.out_proj", d, hv);
    add_norm(p + "cross_attn_norm", d);
    add_linear(p + "ffn.fc1", c.d_ff, d);
    add_linear(p + "ffn.fc2", d, c.d_ff);
    add_norm(p + "ffn_norm", d);
  }
}

void ParameterLayout::add(const std::string& name, std::vector<std::int64_t> shape, InitKind init, std::int64_t fan_in,
                          std::int64_t fan_out) {
  ParameterInfo info;
  info.name = name;
  info.size = 1;
  for (auto s : shape) info.size *= s;
  info.shape = std::move(shape);
  info.offset = total_;
  info.init = init;
  info.fan_in = fan_in;
  info.fan_out = fan_out;
  total_ += info.size;
  tensors_.push_back(std::move(info));
}

void ParameterLayout::add_linear(const std::string& prefix, std::int64_t out, std::int64_t in) {
  add(prefix + ".weight", {out, in}, InitKind::XavierUniform, in, out);
  add(prefix + ".bias", {out}, InitKind::Zeros);
}

void ParameterLayout::add_norm(const std::string& prefix, std::int64_t dim) {
  add(prefix + ".weight", {dim}, InitKind::Ones);
  add(prefix + ".bias", {dim}, InitKind::Zeros);
}

const ParameterInfo& ParameterLayout::find(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return t;
  throw Error("no parameter tensor named '" + name + "'");
}

}  // namespace attn
