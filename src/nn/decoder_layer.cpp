#include "nn/decoder_layer.h"

namespace attn::nn {

void DecoderLayer::forward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
                           const AttentionMask& self_mask, const AttentionMask& memory_mask, const Dropout& dropout,
                           const Cache& cache, float* y, const Incremental* incremental, const TapPoint& tap) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  // Incrementally, each hypothesis row is its own sequence for self-attention (its own cached
  // history) while a sentence's rows share its memory as queries of encoder-decoder attention.
  const AttentionShape self_shape =
      incremental
          ? self_attention.forward(be, x, static_cast<int>(rows), 1, self_mask, cache.self_attention,
                                   cache.self_residual.sum, &incremental->self)
          : self_attention.forward(be, x, batch, length, self_mask, cache.self_attention, cache.self_residual.sum);
  tap(AttentionSite::decoder_self, self_shape, cache.self_attention.probs);
  residual_norm_forward(be, self_attention_norm, x.f32(), cache.self_residual.sum, rows, dropout.rate,
                        dropout.site(dropout_site + 0), cache.self_residual, cache.after_self,
                        cache.after_self_rounded);
  const AttentionShape cross_shape = cross_attention.forward(
      be, Activations(cache.after_self, cache.after_self_rounded), memory, batch, length, memory_length, memory_mask,
      cache.cross_attention, cache.cross_residual.sum, incremental ? &incremental->memory : nullptr);
  tap(AttentionSite::cross, cross_shape, cache.cross_attention.probs);
  residual_norm_forward(be, cross_attention_norm, cache.after_self, cache.cross_residual.sum, rows, dropout.rate,
                        dropout.site(dropout_site + 1), cache.cross_residual, cache.after_cross,
                        cache.after_cross_rounded);
  ffn.forward(be, Activations(cache.after_cross, cache.after_cross_rounded), rows, cache.hidden, cache.ffn_residual.sum,
              hidden_dropout(dropout));
  residual_norm_forward(be, ffn_norm, cache.after_cross, cache.ffn_residual.sum, rows, dropout.rate,
                        dropout.site(dropout_site + 2), cache.ffn_residual, y, cache.output_rounded);
}

void DecoderLayer::backward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
                            const AttentionMask& self_mask, const AttentionMask& memory_mask, const Dropout& dropout,
                            const Cache& cache, const LayerScratch& scratch, float* dy, float* d_memory) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const Activations d_ffn_out =
      residual_norm_backward(be, ffn_norm, dy, rows, dropout.rate, dropout.site(dropout_site + 2), cache.ffn_residual,
                             scratch.d_sublayer, scratch.dy_read, ffn.fc2.bias_grad);
  Activations after_cross = cache.after_cross_rounded;
  if (!cache.after_cross_rounded) {
    residual_norm_output(be, cross_attention_norm, cache.cross_residual, rows, cache.after_cross);
    after_cross = cache.after_cross;
  }
  ffn.backward(be, after_cross, rows, cache.hidden, d_ffn_out, scratch.d_hidden, dy, scratch.dy_read,
               hidden_dropout(dropout));
  const Activations d_cross_out =
      residual_norm_backward(be, cross_attention_norm, dy, rows, dropout.rate, dropout.site(dropout_site + 1),
                             cache.cross_residual, scratch.d_sublayer, scratch.dy_read, cross_attention.out.bias_grad);
  Activations after_self = cache.after_self_rounded;
  if (!cache.after_self_rounded) {
    residual_norm_output(be, self_attention_norm, cache.self_residual, rows, cache.after_self);
    after_self = cache.after_self;
  }
  cross_attention.backward(be, after_self, memory, batch, length, memory_length, memory_mask, cache.cross_attention,
                           d_cross_out, scratch.attention, dy, d_memory);
  const Activations d_self_out =
      residual_norm_backward(be, self_attention_norm, dy, rows, dropout.rate, dropout.site(dropout_site + 0),
                             cache.self_residual, scratch.d_sublayer, scratch.dy_read, self_attention.out.bias_grad);
  self_attention.backward(be, x, batch, length, self_mask, cache.self_attention, d_self_out, scratch.attention, dy);
}

}  // namespace attn::nn
