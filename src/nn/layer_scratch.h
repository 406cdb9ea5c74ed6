#pragma once
// Temporaries of a layer's backward pass. One set serves every layer in turn.
#include "nn/self_attention.h"

namespace attn::nn {

struct LayerScratch {
  float* d_sublayer = nullptr;  // [rows, d_model]: gradient at a sublayer's output
  float* d_hidden = nullptr;    // [rows, d_ff]
  RowBuffer dy_read;            // the type a product's output gradient is read in (Linear::backward)
  AttentionScratch attention;
};

}  // namespace attn::nn
