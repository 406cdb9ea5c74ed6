#pragma once
// Where layers report the attention weights they used, for attention export. A layer given a
// tap calls it right after each of its attentions, with the probabilities softmax(Q·Kᵀ/√d_k)
// exactly as the next product reads them; without a tap (training, plain translation) nothing
// is reported and nothing is copied.
#include "nn/attention.h"

namespace attn::nn {

enum class AttentionSite { encoder_self, decoder_self, cross };

class AttentionTap {
 public:
  virtual ~AttentionTap() = default;
  // probs [s.batch, s.heads, s.queries, s.keys] in backend memory, valid during the call only.
  virtual void record(AttentionSite site, int layer, const AttentionShape& s, const float* probs) = 0;
  // Incremental decoding announces each new batch (before the encoder runs) and each new target
  // position (before the decoder's layers run).
  virtual void begin_batch() {}
  virtual void begin_step(int position) {}
};

// A layer's handle on the tap: the tap (null: report nothing) and the layer's index in its stack.
struct TapPoint {
  AttentionTap* tap = nullptr;
  int layer = 0;
  void operator()(AttentionSite site, const AttentionShape& s, const float* probs) const {
    if (tap) tap->record(site, layer, s, probs);
  }
};

}  // namespace attn::nn
