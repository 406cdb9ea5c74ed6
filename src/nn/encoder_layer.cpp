#include "nn/encoder_layer.h"

namespace attn::nn {

void EncoderLayer::forward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask,
                           const Dropout& dropout, const Cache& cache, float* y, const TapPoint& tap) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  tap(AttentionSite::encoder_self,
      attention.forward(be, x, batch, length, mask, cache.attention, cache.attention_residual.sum),
      cache.attention.probs);
  residual_norm_forward(be, attention_norm, x.f32(), cache.attention_residual.sum, rows, dropout.rate,
                        dropout.site(dropout_site + 0), cache.attention_residual, cache.middle, cache.middle_rounded);
  ffn.forward(be, Activations(cache.middle, cache.middle_rounded), rows, cache.hidden, cache.ffn_residual.sum,
              hidden_dropout(dropout));
  residual_norm_forward(be, ffn_norm, cache.middle, cache.ffn_residual.sum, rows, dropout.rate,
                        dropout.site(dropout_site + 1), cache.ffn_residual, y, cache.output_rounded);
}

void EncoderLayer::backward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask,
                            const Dropout& dropout, const Cache& cache, const LayerScratch& scratch, float* dy) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  const Activations d_ffn_out =
      residual_norm_backward(be, ffn_norm, dy, rows, dropout.rate, dropout.site(dropout_site + 1), cache.ffn_residual,
                             scratch.d_sublayer, scratch.dy_read, ffn.fc2.bias_grad);
  Activations middle = cache.middle_rounded;
  if (!cache.middle_rounded) {
    residual_norm_output(be, attention_norm, cache.attention_residual, rows, cache.middle);
    middle = cache.middle;
  }
  ffn.backward(be, middle, rows, cache.hidden, d_ffn_out, scratch.d_hidden, dy, scratch.dy_read,
               hidden_dropout(dropout));
  const Activations d_attention_out =
      residual_norm_backward(be, attention_norm, dy, rows, dropout.rate, dropout.site(dropout_site + 0),
                             cache.attention_residual, scratch.d_sublayer, scratch.dy_read, attention.out.bias_grad);
  attention.backward(be, x, batch, length, mask, cache.attention, d_attention_out, scratch.attention, dy);
}

}  // namespace attn::nn
