#include "model/training_workspace.h"

#include <algorithm>

namespace attn {
namespace {

nn::ResidualNormCache take_residual(Arena& a, std::int64_t rows, int d) {
  return {a.take<float>(rows * d), a.take<float>(rows), a.take<float>(rows)};
}

}  // namespace

void TrainingWorkspace::lay_out(Backend& be, const ModelConfig& c, int batch, int src_len, int tgt_len,
                                bool backward) {
  arena_.reset();
  const bool bf16 = backward && be.keeps_bf16_activations();
  assign(c, batch, src_len, tgt_len, backward, bf16);
  if (!arena_.fits()) {
    // Grow with headroom so that slowly growing batch shapes do not reallocate every step.
    arena_.reserve(be, arena_.used() + arena_.used() / 8);
    arena_.reset();
    assign(c, batch, src_len, tgt_len, backward, bf16);
  }
}

void TrainingWorkspace::assign(const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward,
                               bool bf16_activations) {
  Arena& a = arena_;
  const std::int64_t rs = static_cast<std::int64_t>(batch) * src_len;
  const std::int64_t rt = static_cast<std::int64_t>(batch) * tgt_len;
  const int d = c.d_model, hv = c.heads * c.d_v, hk = c.heads * c.d_k;
  const std::int64_t heads_b = static_cast<std::int64_t>(batch) * c.heads;
  src = a.take<std::int32_t>(rs);
  tgt_in = a.take<std::int32_t>(rt);
  tgt_out = a.take<std::int32_t>(rt);
  src_lengths = a.take<std::int32_t>(batch);
  tgt_lengths = a.take<std::int32_t>(batch);

  const std::int64_t rows = std::max(rs, rt);
  encoder_input = a.take<float>(rs * d);
  float* const alternating[2] = {a.take<float>(rows * d), a.take<float>(rows * d)};
  float* const memory = a.take<float>(rs * d);
  // Sublayer outputs: one set for all layers (recomputed in backward).
  float* const first_sublayer = a.take<float>(rows * d);
  float* const second_sublayer = a.take<float>(rt * d);
  // Attention's probabilities and context, likewise.
  const int longest = std::max(src_len, tgt_len);
  float* const probs = a.take<float>(heads_b * longest * longest);
  float* const context = a.take<float>(rows * hv);
  // The feed-forward hidden layer: kept per layer for backward (in bf16 where the backend keeps
  // bf16 activations, with one float buffer as scratch), one buffer for all without backward.
  float* const shared_hidden = backward && !bf16_activations ? nullptr : a.take<float>(rows * c.d_ff);
  auto hidden = [&](std::int64_t layer_rows) -> nn::FeedForward::Hidden {
    if (!backward) return {shared_hidden, nullptr};
    if (bf16_activations) return {shared_hidden, a.take<Bf16>(layer_rows * c.d_ff)};
    return {a.take<float>(layer_rows * c.d_ff), nullptr};
  };
  encoder.resize(c.encoder_layers);
  encoder_outputs.resize(c.encoder_layers);
  for (int i = 0; i < c.encoder_layers; ++i) {
    auto& e = encoder[i];
    e.attention = {a.take<float>(rs * c.qkv_width()), probs, context};
    e.attention_residual = take_residual(a, rs, d);
    e.middle = first_sublayer;
    e.hidden = hidden(rs);
    e.ffn_residual = take_residual(a, rs, d);
    encoder_outputs[i] = i + 1 == c.encoder_layers ? memory : alternating[i % 2];
  }
  decoder_input = a.take<float>(rt * d);
  decoder.resize(c.decoder_layers);
  decoder_outputs.resize(c.decoder_layers);
  for (int i = 0; i < c.decoder_layers; ++i) {
    auto& l = decoder[i];
    l.self_attention = {a.take<float>(rt * c.qkv_width()), probs, context};
    l.self_residual = take_residual(a, rt, d);
    l.after_self = first_sublayer;
    l.cross_attention = {a.take<float>(rt * hk), a.take<float>(rs * (hk + hv)),
                         probs, context};
    l.cross_residual = take_residual(a, rt, d);
    l.after_cross = second_sublayer;
    l.hidden = hidden(rt);
    l.ffn_residual = take_residual(a, rt, d);
    decoder_outputs[i] = alternating[i % 2];
  }
  std::int64_t block = kLogitsBlockElements / c.vocab_size;
  if (block > 64) block -= block % 64;  // even blocks for the usual batch shapes
  logits_rows = std::min(rt, std::max<std::int64_t>(1, block));
  if (max_logits_rows > 0) logits_rows = std::min(logits_rows, max_logits_rows);
  logits = a.take<float>(logits_rows * c.vocab_size);
  if (!backward) {
    d_decoder = d_memory = layer_input = nullptr;
    scratch = {};
    return;
  }
  layer_input = alternating[0];  // free once the output layer has read the last decoder output
  d_decoder = a.take<float>(rt * d);
  d_memory = a.take<float>(rs * d);
  scratch.d_sublayer = a.take<float>(rows * d);
  scratch.d_hidden = a.take<float>(rows * c.d_ff);
  scratch.attention.d_ctx = a.take<float>(rows * hv);
  scratch.attention.d_probs = a.take<float>(heads_b * longest * longest);
  scratch.attention.d_q = a.take<float>(rows * c.qkv_width());
  scratch.attention.d_kv = a.take<float>(rs * (hk + hv));
}

}  // namespace attn
