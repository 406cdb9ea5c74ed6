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
  assign(c, batch, src_len, tgt_len, backward);
  if (!arena_.fits()) {
    // Grow with headroom so that slowly growing batch shapes do not reallocate every step.
    arena_.reserve(be, arena_.used() + arena_.used() / 8);
    arena_.reset();
    assign(c, batch, src_len, tgt_len, backward);
  }
}

void TrainingWorkspace::assign(const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward) {
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

  encoder_input = a.take<float>(rs * d);
  encoder.resize(c.encoder_layers);
  encoder_outputs.resize(c.encoder_layers);
  for (int i = 0; i < c.encoder_layers; ++i) {
    auto& e = encoder[i];
    e.attention = {a.take<float>(rs * c.qkv_width()), a.take<float>(heads_b * src_len * src_len),
                   a.take<float>(rs * hv)};
    e.attention_residual = take_residual(a, rs, d);
    e.middle = a.take<float>(rs * d);
    e.hidden = a.take<float>(rs * c.d_ff);
    e.ffn_residual = take_residual(a, rs, d);
    encoder_outputs[i] = a.take<float>(rs * d);
  }
  decoder_input = a.take<float>(rt * d);
  decoder.resize(c.decoder_layers);
  decoder_outputs.resize(c.decoder_layers);
  for (int i = 0; i < c.decoder_layers; ++i) {
    auto& l = decoder[i];
    l.self_attention = {a.take<float>(rt * c.qkv_width()), a.take<float>(heads_b * tgt_len * tgt_len),
                        a.take<float>(rt * hv)};
    l.self_residual = take_residual(a, rt, d);
    l.after_self = a.take<float>(rt * d);
    l.cross_attention = {a.take<float>(rt * hk), a.take<float>(rs * (hk + hv)),
                         a.take<float>(heads_b * tgt_len * src_len), a.take<float>(rt * hv)};
    l.cross_residual = take_residual(a, rt, d);
    l.after_cross = a.take<float>(rt * d);
    l.hidden = a.take<float>(rt * c.d_ff);
    l.ffn_residual = take_residual(a, rt, d);
    decoder_outputs[i] = a.take<float>(rt * d);
  }
  logits = a.take<float>(rt * c.vocab_size);
  if (!backward) {
    d_decoder = d_memory = nullptr;
    scratch = {};
    return;
  }
  const std::int64_t rows = std::max(rs, rt);
  const int longest = std::max(src_len, tgt_len);
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
