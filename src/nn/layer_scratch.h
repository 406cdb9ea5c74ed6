#pragma once
// Temporaries of a layer's backward pass. One set serves every layer in turn.
#include "nn/self_attention.h"

namespace attn::nn {

struct LayerScratch {
  float* d_sublayer = nullptr;  // [rows, d_model]: gradient at a sublayer's output
  float* d_hidden = nullptr;    // [rows, d_ff]
  Bf16* dy_bf16 = nullptr;      // with bf16 activations: a product's output gradient (Linear::backward)
  AttentionScratch attention;
};

}  // namespace attn::nn
