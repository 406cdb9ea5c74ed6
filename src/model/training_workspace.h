#pragma once
// The activations of one training batch, laid out in one arena: what each layer keeps for its
// backward pass, the logits, and the backward pass's temporaries. Laid out again for every batch
// (pointers only); memory is allocated only when a batch needs more than any before it.
#include <cstdint>
#include <vector>

#include "kernels/device_buffer.h"
#include "model/model_config.h"
#include "nn/decoder_layer.h"
#include "nn/encoder_layer.h"

namespace attn {

struct TrainingWorkspace {
  // Device copies of the batch's ids and lengths.
  std::int32_t *src = nullptr, *tgt_in = nullptr, *tgt_out = nullptr;
  std::int32_t *src_lengths = nullptr, *tgt_lengths = nullptr;
  float* encoder_input = nullptr;                  // [B·S, d]
  std::vector<float*> encoder_outputs;             // per layer [B·S, d]
  std::vector<nn::EncoderLayer::Cache> encoder;
  float* decoder_input = nullptr;                  // [B·T, d]
  std::vector<float*> decoder_outputs;             // per layer [B·T, d]
  std::vector<nn::DecoderLayer::Cache> decoder;
  float* logits = nullptr;                         // [B·T, vocab]; gradient after the loss
  // Backward only:
  float* d_decoder = nullptr;                      // [B·T, d]
  float* d_memory = nullptr;                       // [B·S, d]
  nn::LayerScratch scratch;

  // Lays out the buffers for a batch of this shape, growing the arena if needed.
  void lay_out(Backend& be, const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward);
  std::size_t bytes() const { return arena_.capacity(); }

 private:
  void assign(const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward);
  Arena arena_;
};

}  // namespace attn
