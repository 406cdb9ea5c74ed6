// Writes what the PyTorch parity check needs: a model (safetensors + config), a batch, and this
// implementation's loss and gradients for it. transformer_reference.py recomputes them in torch.
//   parity_dump PRESET OUT_DIR
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "model/safetensors.h"
#include "model/transformer.h"
#include "nn/attention_tap.h"

namespace {
// Keeps every attention of a forced-decoding pass, as "cross.L", "decoder_self.L", "encoder_self.L".
struct KeepAll : attn::nn::AttentionTap {
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> tensors;
  void record(attn::nn::AttentionSite site, int layer, const attn::nn::AttentionShape& s, const float* probs) override {
    const char* name = site == attn::nn::AttentionSite::cross          ? "cross"
                       : site == attn::nn::AttentionSite::decoder_self ? "decoder_self"
                                                                        : "encoder_self";
    auto& t = tensors[std::string(name) + "." + std::to_string(layer)];
    t.first = {s.batch, s.heads, s.queries, s.keys};
    t.second.assign(probs, probs + s.probs_size());  // the CPU backend's memory is the host's
  }
};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: parity_dump PRESET OUT_DIR\n";
    return 2;
  }
  const std::string preset = argv[1];
  const std::filesystem::path out = argv[2];
  std::filesystem::create_directories(out);
  attn::ModelConfig c = attn::ModelConfig::preset(preset);
  c.dropout = 0;  // torch's dropout masks cannot be reproduced; everything else is compared
  if (preset == "tiny") {
    c.positions = attn::PositionEncoding::Learned;  // the small case covers sinusoidal positions
    c.attention_window = 3;
  }
  attn::Transformer model(c);
  model.initialize(2024);
  // Perturb the weights so that biases and norms are not at their trivial initial values.
  auto p = model.parameters_to_host();
  attn::Random rng(17);
  for (auto& x : p) x += static_cast<float>(0.02 * rng.normal());
  model.set_parameters(p);

  // A batch with padding on both sides: B sentences of random lengths.
  const int batch = preset == "tiny" ? 3 : 8;
  const int max_len = preset == "tiny" ? 7 : 24;
  std::vector<std::vector<std::int32_t>> src, tgt;
  for (int b = 0; b < batch; ++b) {
    std::vector<std::int32_t> s(2 + rng.below(max_len - 2)), t(2 + rng.below(max_len - 2));
    for (auto& x : s) x = 4 + static_cast<std::int32_t>(rng.below(c.vocab_size - 4));
    for (auto& x : t) x = 4 + static_cast<std::int32_t>(rng.below(c.vocab_size - 4));
    src.push_back(s);
    tgt.push_back(t);
  }
  int S = 0, T = 0;
  for (int b = 0; b < batch; ++b) {
    S = std::max<int>(S, static_cast<int>(src[b].size()) + 1);
    T = std::max<int>(T, static_cast<int>(tgt[b].size()) + 1);
  }
  std::vector<std::int32_t> s_ids(batch * S, 0), t_in(batch * T, 0), t_out(batch * T, 0), s_len, t_len;
  for (int b = 0; b < batch; ++b) {
    for (std::size_t i = 0; i < src[b].size(); ++i) s_ids[b * S + i] = src[b][i];
    s_ids[b * S + src[b].size()] = 3;
    t_in[b * T] = 2;
    for (std::size_t i = 0; i < tgt[b].size(); ++i) {
      t_in[b * T + i + 1] = tgt[b][i];
      t_out[b * T + i] = tgt[b][i];
    }
    t_out[b * T + tgt[b].size()] = 3;
    s_len.push_back(static_cast<std::int32_t>(src[b].size()) + 1);
    t_len.push_back(static_cast<std::int32_t>(tgt[b].size()) + 1);
  }
  attn::TokenBatch view{batch, S, T, s_ids.data(), s_len.data(), t_in.data(), t_out.data(), t_len.data()};
  std::int64_t tokens = 0;
  for (auto l : t_len) tokens += l;

  model.zero_gradients();
  const attn::LossSums sums = model.forward_backward(view, attn::nn::Dropout{}, 1.0f / static_cast<float>(tokens));
  model.save_parameters(out / "model.safetensors");
  attn::save_model_config((out / "config.json").string(), c);
  const auto grads = model.gradients_to_host();
  std::vector<attn::TensorToWrite> tensors;
  for (const auto& t : model.layout().tensors()) tensors.push_back({t.name, t.shape, grads.data() + t.offset});
  attn::write_safetensors(out / "grads.safetensors", tensors, {});
  // The attention weights that export reports (attn score --attention reads this same tap).
  KeepAll attention;
  model.sentence_log_probs(view, &attention);
  std::vector<attn::TensorToWrite> probs;
  for (const auto& [name, t] : attention.tensors) probs.push_back({name, t.first, t.second.data()});
  attn::write_safetensors(out / "attention.safetensors", probs, {});
  nlohmann::json j{{"src", s_ids}, {"tgt_in", t_in}, {"tgt_out", t_out}, {"src_lengths", s_len},
                   {"tgt_lengths", t_len}, {"batch", batch}, {"src_len", S}, {"tgt_len", T},
                   {"loss", sums.loss / static_cast<double>(tokens)}, {"tokens", sums.tokens}};
  std::ofstream(out / "batch.json") << j.dump();
  std::cout << "parity_dump: " << preset << " model with " << model.parameter_count() << " parameters, loss "
            << sums.loss / static_cast<double>(tokens) << " over " << tokens << " tokens -> " << out << "\n";
  return 0;
}
