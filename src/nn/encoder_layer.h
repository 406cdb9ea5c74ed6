#pragma once
// One encoder layer: self-attention and feed-forward sublayers, each wrapped as
// LayerNorm(x + Dropout(Sublayer(x))).
#include "nn/dropout.h"
#include "nn/feed_forward.h"
#include "nn/layer_scratch.h"
#include "nn/residual_norm.h"
#include "nn/self_attention.h"
#include "nn/attention_tap.h"

namespace attn::nn {

struct EncoderLayer {
  SelfAttention attention;
  LayerNormParams attention_norm;
  FeedForward ffn;
  LayerNormParams ffn_norm;
  std::uint64_t dropout_site = 0;  // distinguishes this layer's dropout streams

  // The feed-forward hidden layer's dropout: site + kFeedForwardHiddenSite.
  HiddenDropout hidden_dropout(const Dropout& d) const {
    return {d.activation, d.site(dropout_site + kFeedForwardHiddenSite)};
  }

  struct Cache {
    SelfAttention::Cache attention;
    ResidualNormCache attention_residual;
    // Output of the first sublayer [rows, d_model]. May be shared by all layers: the backward
    // pass recomputes it from attention_residual.
    float* middle = nullptr;
    FeedForward::Hidden hidden;  // [rows, d_ff]
    ResidualNormCache ffn_residual;
    // Where not null (training with bf16 activations), per layer [rows, d_model]: the first
    // sublayer's output and the layer's output rounded to bf16 in the forward pass, which every
    // product reading them reads (forward and backward); the backward pass then recomputes neither.
    Bf16* middle_rounded = nullptr;
    Bf16* output_rounded = nullptr;
  };

  // x, y: [B·S, d_model]; x in float (with its bf16 rounding where kept).
  void forward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask, const Dropout& dropout,
               const Cache& cache, float* y, const TapPoint& tap = {}) const;
  // On entry dy = ∂L/∂y, on exit ∂L/∂x. x as in forward, or its bf16 rounding alone (only
  // products read it here).
  void backward(Backend& be, Activations x, int batch, int length, const AttentionMask& mask, const Dropout& dropout,
                const Cache& cache, const LayerScratch& scratch, float* dy) const;
};

}  // namespace attn::nn
