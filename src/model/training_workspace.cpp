#include "model/training_workspace.h"

#include <algorithm>

namespace attn {
namespace {

// p + n, or null while the arena is still too small (a first pass that only measures).
template <typename T>
T* offset(T* p, std::int64_t n) {
  return p ? p + n : nullptr;
}

nn::ResidualNormCache take_residual(Arena& a, std::int64_t rows, int d) {
  return {a.take<float>(rows * d), a.take<float>(rows), a.take<float>(rows)};
}

}  // namespace

void TrainingWorkspace::lay_out(Backend& be, const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward) {
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
  // With bf16 activations, the rows every product reads rounded (layer inputs and outputs, the
  // sublayers' outputs) are kept per layer in bf16: rounded once, and not recomputed in backward.
  const bool round_once = bf16_activations && round_activations_once;
  auto rounded = [&](std::int64_t layer_rows) { return round_once ? a.take<Bf16>(layer_rows * d) : nullptr; };
  encoder_input_rounded = rounded(rs);
  float* const alternating[2] = {a.take<float>(rows * d), a.take<float>(rows * d)};
  float* const memory = a.take<float>(rs * d);
  // Sublayer outputs: one set for all layers (recomputed in backward).
  float* const first_sublayer = a.take<float>(rows * d);
  float* const second_sublayer = a.take<float>(rt * d);
  // Attention's probabilities and context: kept per layer for backward where they fit in
  // max_kept_attention_bytes, else one set for all layers (recomputed in backward).
  const int longest = std::max(src_len, tgt_len);
  const std::int64_t self_src = heads_b * src_len * src_len, self_tgt = heads_b * tgt_len * tgt_len,
                     cross = heads_b * tgt_len * src_len;
  const std::int64_t kept_attention_bytes =
      static_cast<std::int64_t>(sizeof(float)) *
      (c.encoder_layers * (self_src + rs * hv) + c.decoder_layers * (self_tgt + cross + 2 * rt * hv));
  const bool keep_attention = backward && kept_attention_bytes <= max_kept_attention_bytes;
  float* const probs = keep_attention ? nullptr : a.take<float>(heads_b * longest * longest);
  float* const context = keep_attention ? nullptr : a.take<float>(rows * hv);
  struct AttentionOutput {
    float *probs, *ctx;
    bool own;
    Bf16* ctx_rounded;  // kept with bf16 activations (the layer's own context only)
  };
  auto attention_output = [&](std::int64_t probs_size, std::int64_t ctx_rows) -> AttentionOutput {
    if (!keep_attention) return {probs, context, false, nullptr};
    return {a.take<float>(probs_size), a.take<float>(ctx_rows * hv), true,
            round_once ? a.take<Bf16>(ctx_rows * hv) : nullptr};
  };
  // The feed-forward hidden layer: kept per layer for backward (in bf16 where the backend keeps
  // bf16 activations, with one float buffer as scratch), one buffer for all without backward.
  float* const shared_hidden = backward && !bf16_activations ? nullptr : a.take<float>(rows * c.d_ff);
  auto hidden = [&](std::int64_t layer_rows) -> nn::FeedForward::Hidden {
    if (!backward) return {shared_hidden, shared_hidden};
    if (bf16_activations) return {shared_hidden, a.take<Bf16>(layer_rows * c.d_ff)};
    float* const kept = a.take<float>(layer_rows * c.d_ff);
    return {kept, kept};
  };
  // Attention's projections (Q, K, V; cross-attention's Q then K, V): likewise kept per layer, in
  // bf16 with bf16 activations (the float buffer then shared as every layer's working copy).
  // Without backward they stay float: evaluation and decoding read Q, K, V unrounded, where
  // training's forward pass reads them rounded to bf16.
  float* const shared_projections = backward && !bf16_activations ? nullptr : a.take<float>(rows * c.qkv_width());
  struct Projection {
    float* f32;          // the product's output
    nn::RowBuffer kept;  // what attention reads: f32 itself, or its bf16 copy
  };
  auto projection = [&](std::int64_t n, std::int64_t at) -> Projection {
    if (!backward) return {offset(shared_projections, at), offset(shared_projections, at)};
    if (bf16_activations) return {offset(shared_projections, at), a.take<Bf16>(n)};
    float* const kept = a.take<float>(n);
    return {kept, kept};
  };
  encoder.resize(c.encoder_layers);
  encoder_outputs.resize(c.encoder_layers);
  for (int i = 0; i < c.encoder_layers; ++i) {
    auto& e = encoder[i];
    const Projection qkv = projection(rs * c.qkv_width(), 0);
    const AttentionOutput o = attention_output(self_src, rs);
    e.attention = {qkv.f32, o.probs, o.ctx, qkv.kept, o.own, o.ctx_rounded};
    e.attention_residual = take_residual(a, rs, d);
    e.middle = first_sublayer;
    e.hidden = hidden(rs);
    e.ffn_residual = take_residual(a, rs, d);
    e.middle_rounded = rounded(rs);
    e.output_rounded = rounded(rs);
    encoder_outputs[i] = i + 1 == c.encoder_layers ? memory : alternating[i % 2];
  }
  decoder_input = a.take<float>(rt * d);
  decoder_input_rounded = rounded(rt);
  decoder.resize(c.decoder_layers);
  decoder_outputs.resize(c.decoder_layers);
  for (int i = 0; i < c.decoder_layers; ++i) {
    auto& l = decoder[i];
    const Projection qkv = projection(rt * c.qkv_width(), 0);
    const AttentionOutput self = attention_output(self_tgt, rt);
    l.self_attention = {qkv.f32, self.probs, self.ctx, qkv.kept, self.own, self.ctx_rounded};
    l.self_residual = take_residual(a, rt, d);
    l.after_self = first_sublayer;
    const Projection q = projection(rt * hk, 0), kv = projection(rs * (hk + hv), rt * hk);
    const AttentionOutput cross_output = attention_output(cross, rt);
    l.cross_attention = {q.f32,  kv.f32,  cross_output.probs, cross_output.ctx,
                         q.kept, kv.kept, cross_output.own,   cross_output.ctx_rounded};
    l.cross_residual = take_residual(a, rt, d);
    l.after_cross = second_sublayer;
    l.hidden = hidden(rt);
    l.ffn_residual = take_residual(a, rt, d);
    l.after_self_rounded = rounded(rt);
    l.after_cross_rounded = rounded(rt);
    l.output_rounded = rounded(rt);
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
  // With bf16 activations the forward pass's float hidden layer is free by now.
  scratch.d_hidden = shared_hidden ? shared_hidden : a.take<float>(rows * c.d_ff);
  scratch.attention.d_ctx = a.take<float>(rows * hv);
  scratch.attention.d_probs = a.take<float>(heads_b * longest * longest);
  // Self-attention's ∂QKV, or cross-attention's ∂Q then ∂KV (never both at once).
  scratch.attention.d_q = a.take<float>(rows * c.qkv_width());
  scratch.attention.d_kv = offset(scratch.attention.d_q, rt * hk);
  // A product's output gradient as its products read it: in float (no buffer), or rounded to bf16
  // into scratch for the widest layer's or a block of logits'.
  const std::int64_t widest = std::max({c.d_ff, c.qkv_width(), d});
  scratch.dy_read = bf16_activations ? nn::RowBuffer(a.take<Bf16>(std::max(rows * widest, logits_rows * c.vocab_size)))
                                     : nn::RowBuffer();
  scratch.attention.dy_read = scratch.dy_read;
  scratch.attention.d_ctx_rounded = bf16_activations ? a.take<Bf16>(rows * hv) : nullptr;
}

}  // namespace attn
