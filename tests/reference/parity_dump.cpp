// Writes what the PyTorch parity check needs: a model (safetensors + config), a batch, and this
// implementation's loss and gradients for it. transformer_reference.py recomputes them in torch.
//   parity_dump CASE OUT_DIR [--nan=loss|--nan=gradient:TENSOR|--nan=attention:TENSOR]
// Cases: tiny and small (the presets), restricted (tiny with a window of 3 over sentences of 12 to
// 20 tokens and one of 2, so that windows cut real keys on both sides and padded query rows see no
// key; the output layer and loss in blocks of 7 rows), dropout (tiny with dropout 0.1 and activation
// dropout 0.2 on the feed-forward hidden layers).
// --nan writes a NaN into one number of attn's results, for the tests that the check rejects it.
#include <cmath>
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

// Counts, on one side of a batch, the real query rows whose window cuts real keys on both sides and
// the padded query rows that see no key at all, under attention_softmax's masks.
struct WindowCoverage {
  int cut_both_sides = 0, no_key = 0;
};
WindowCoverage window_coverage(const std::vector<std::int32_t>& lengths, int padded, bool causal, int window) {
  WindowCoverage w;
  for (const auto len : lengths)
    for (int pos = 0; pos < padded; ++pos) {
      const int lo = std::max(0, pos - window), hi = std::min(causal ? std::min(len, pos + 1) : len, pos + window + 1);
      if (pos < len && lo > 0 && hi < len) ++w.cut_both_sides;
      if (pos >= len && lo >= hi) ++w.no_key;
    }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: parity_dump CASE OUT_DIR [--nan=loss|--nan=gradient:TENSOR|--nan=attention:TENSOR]\n";
    return 2;
  }
  const std::string name = argv[1];
  const std::filesystem::path out = argv[2];
  const std::string nan = argc == 4 ? argv[3] : "";
  if (!nan.empty() && nan != "--nan=loss" && nan.rfind("--nan=gradient:", 0) != 0 &&
      nan.rfind("--nan=attention:", 0) != 0) {
    std::cerr << "parity_dump: unknown option " << nan << "\n";
    return 2;
  }
  const bool restricted = name == "restricted", with_dropout = name == "dropout";
  const std::string preset = restricted || with_dropout ? "tiny" : name;
  std::filesystem::create_directories(out);
  attn::ModelConfig c = attn::ModelConfig::preset(preset);
  // The reference recomputes attn's dropout masks from their rule (kernels/cpu/dropout.cpp); the
  // other cases compare without dropout.
  c.dropout = with_dropout ? 0.1f : 0.0f;
  c.activation_dropout = with_dropout ? 0.2f : 0.0f;  // the feed-forward hidden layer's own rate
  const std::uint64_t dropout_seed = 99;
  // Learned positions here; the small and restricted cases cover sinusoidal ones.
  if (name == "tiny" || with_dropout) c.positions = attn::PositionEncoding::Learned;
  if (name == "tiny" || restricted) c.attention_window = 3;
  // Several blocks of the output layer and loss, the last one shorter (checked below).
  const int block_rows = restricted ? 7 : 0;
  attn::Transformer model(c);
  model.initialize(2024);
  // Perturb the weights so that biases and norms are not at their trivial initial values.
  auto p = model.parameters_to_host();
  attn::Random rng(17);
  for (auto& x : p) x += static_cast<float>(0.02 * rng.normal());
  model.set_parameters(p);

  // A batch with padding on both sides: B sentences of random lengths.
  const int batch = name == "small" ? 8 : restricted ? 4 : 3;
  const int max_len = name == "small" ? 24 : 7;
  auto length = [&](int b) -> std::size_t {
    if (restricted) return b == 0 ? 2 : 12 + rng.below(9);
    return 2 + rng.below(max_len - 2);
  };
  std::vector<std::vector<std::int32_t>> src, tgt;
  for (int b = 0; b < batch; ++b) {
    const std::size_t s_n = length(b), t_n = length(b);
    std::vector<std::int32_t> s(s_n), t(t_n);
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

  // A case that stops covering what it is for fails here rather than passing without it.
  if (restricted) {
    const auto source = window_coverage(s_len, S, false, c.attention_window);
    const auto target = window_coverage(t_len, T, true, c.attention_window);
    if (source.cut_both_sides == 0 || source.no_key == 0 || target.no_key == 0) {
      std::cerr << "parity_dump: the restricted batch lacks windows cut on both sides or padded rows that see no key\n";
      return 1;
    }
    const std::int64_t rows = static_cast<std::int64_t>(batch) * T;
    if (rows <= 2 * block_rows || rows % block_rows == 0) {
      std::cerr << "parity_dump: " << rows << " target rows do not make several blocks of " << block_rows
                << " with a shorter last one\n";
      return 1;
    }
    std::cout << "parity_dump: " << source.cut_both_sides << " source rows see a window cut on both sides; "
              << source.no_key << " source and " << target.no_key << " target padded rows see no key; " << rows
              << " target rows in blocks of " << block_rows << "\n";
  }
  if (block_rows > 0) model.set_logits_block_rows(block_rows);

  model.zero_gradients();
  const attn::LossSums sums = model.forward_backward(
      view, attn::nn::Dropout{c.dropout, dropout_seed, c.activation_dropout}, 1.0f / static_cast<float>(tokens));
  double loss = sums.loss / static_cast<double>(tokens);
  if (nan == "--nan=loss") loss = std::nan("");
  model.save_parameters(out / "model.safetensors");
  attn::save_model_config((out / "config.json").string(), c);
  auto grads = model.gradients_to_host();
  std::vector<attn::TensorToWrite> tensors;
  for (const auto& t : model.layout().tensors()) {
    if (nan == "--nan=gradient:" + t.name) grads[t.offset] = std::nanf("");
    tensors.push_back({t.name, t.shape, grads.data() + t.offset});
  }
  attn::write_safetensors(out / "grads.safetensors", tensors, {});
  // The attention weights that export reports (attn score --attention reads this same tap).
  KeepAll attention;
  model.sentence_log_probs(view, &attention);
  std::vector<attn::TensorToWrite> probs;
  for (auto& [tensor, t] : attention.tensors) {
    if (nan == "--nan=attention:" + tensor) t.second[0] = std::nanf("");  // sentence 0, head 0, query 0, key 0
    probs.push_back({tensor, t.first, t.second.data()});
  }
  attn::write_safetensors(out / "attention.safetensors", probs, {});
  // JSON has no NaN: nlohmann writes a NaN loss as null, which the reference reads as NaN.
  nlohmann::json j{{"case", name},
                   {"src", s_ids},
                   {"tgt_in", t_in},
                   {"tgt_out", t_out},
                   {"src_lengths", s_len},
                   {"tgt_lengths", t_len},
                   {"batch", batch},
                   {"src_len", S},
                   {"tgt_len", T},
                   {"loss", loss},
                   {"tokens", sums.tokens},
                   {"dropout_seed", dropout_seed},
                   {"logits_block_rows", block_rows}};
  std::ofstream(out / "batch.json") << j.dump();
  std::cout << "parity_dump: " << name << " model with " << model.parameter_count() << " parameters, loss " << loss
            << " over " << tokens << " tokens -> " << out << "\n";
  return 0;
}
