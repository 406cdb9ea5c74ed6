#pragma once
// One decoder layer: causal self-attention, encoder-decoder attention and feed-forward
// sublayers, each wrapped as LayerNorm(x + Dropout(Sublayer(x))).
#include "nn/cross_attention.h"
#include "nn/dropout.h"
#include "nn/feed_forward.h"
#include "nn/layer_scratch.h"
#include "nn/residual_norm.h"
#include "nn/self_attention.h"
#include "nn/attention_tap.h"

namespace attn::nn {

struct DecoderLayer {
  SelfAttention self_attention;
  LayerNormParams self_attention_norm;
  CrossAttention cross_attention;
  LayerNormParams cross_attention_norm;
  FeedForward ffn;
  LayerNormParams ffn_norm;
  std::uint64_t dropout_site = 0;

  HiddenDropout hidden_dropout(const Dropout& d) const {
    return {d.activation, d.site(dropout_site + kFeedForwardHiddenSite)};
  }

  struct Cache {
    SelfAttention::Cache self_attention;
    ResidualNormCache self_residual;
    // The sublayers' outputs [rows, d_model]. May be shared by all layers (though not with each
    // other): the backward pass recomputes them from the residual caches.
    float* after_self = nullptr;
    CrossAttention::Cache cross_attention;
    ResidualNormCache cross_residual;
    float* after_cross = nullptr;
    FeedForward::Hidden hidden;  // [rows, d_ff]
    ResidualNormCache ffn_residual;
    // Where not null (training with bf16 activations), per layer [rows, d_model]: the sublayers'
    // outputs and the layer's output rounded to bf16, as EncoderLayer::Cache keeps them.
    Bf16* after_self_rounded = nullptr;
    Bf16* after_cross_rounded = nullptr;
    Bf16* output_rounded = nullptr;
  };

  // Incremental decoding (one new position per hypothesis): the self-attention keys and values
  // of the positions so far, and the memory's keys and values projected once per sentence
  // (memory_mask.key_lengths then per cached sentence).
  struct Incremental {
    KeyValueCache self;
    KeyValueCache memory;  // [sentences, S, h·d_k + h·d_v]; each row reads its sentence's cached row
  };

  // x, y: [B·T, d_model]; memory: the encoder output [B·S, d_model]. Training and forced
  // decoding pass whole target sequences; incremental decoding passes `incremental` and the
  // next position of `length` hypotheses per sentence (its self_mask.query_offset is the
  // position; memory is then unused). In both, the tap (if any) receives the attentions.
  // Sublayer outputs go to the cache's buffers; x may alias cache.after_cross, y cache.after_self.
  // x and memory in float (with their bf16 rounding where kept); in backward, x and memory may be
  // their bf16 rounding alone (only products read them there).
  void forward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
               const AttentionMask& self_mask, const AttentionMask& memory_mask, const Dropout& dropout,
               const Cache& cache, float* y, const Incremental* incremental = nullptr, const TapPoint& tap = {}) const;
  // On entry dy = ∂L/∂y, on exit ∂L/∂x; d_memory += ∂L/∂memory.
  void backward(Backend& be, Activations x, Activations memory, int batch, int length, int memory_length,
                const AttentionMask& self_mask, const AttentionMask& memory_mask, const Dropout& dropout,
                const Cache& cache, const LayerScratch& scratch, float* dy, float* d_memory) const;
};

}  // namespace attn::nn
