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
  float* encoder_input = nullptr;  // [B·S, d]
  // Training with bf16 activations: the embeddings rounded to bf16 as the first layers' products
  // read them (the layers' own roundings are in their caches); null otherwise.
  Bf16* encoder_input_rounded = nullptr;  // [B·S, d]
  Bf16* decoder_input_rounded = nullptr;  // [B·T, d]
  // Layer outputs: the last encoder layer's (the memory) is kept; the others live in two
  // alternating buffers only until the next layer has read them, and the backward pass
  // recomputes each layer's input into layer_input from the previous layer's residual cache
  // (with bf16 activations it reads the layer's rounded output instead: Cache::output_rounded).
  std::vector<float*> encoder_outputs;  // per layer [B·S, d]
  std::vector<nn::EncoderLayer::Cache> encoder;
  float* decoder_input = nullptr;       // [B·T, d]
  std::vector<float*> decoder_outputs;  // per layer [B·T, d]
  std::vector<nn::DecoderLayer::Cache> decoder;
  // The output layer runs a block of target rows at a time: at 4096 rows a 32k vocabulary's
  // logits alone would take 0.5 GB (and as much again for the bf16 copy of their gradient).
  static constexpr std::int64_t kLogitsBlockElements = std::int64_t{8} << 20;
  std::int64_t logits_rows = 0;      // rows per block
  std::int64_t max_logits_rows = 0;  // a smaller block, if set (tests)
  float* logits = nullptr;           // [logits_rows, vocab]; gradient after the loss
  // Attention's probabilities and context are kept per layer for the backward pass where all
  // layers' together take at most this (else one set is shared and backward computes each layer's
  // again): the cpu-hour step keeps 14 MB and saves 9 of its 27 attention kernels.
  static constexpr std::int64_t kKeptAttentionBytes = std::int64_t{128} << 20;
  std::int64_t max_kept_attention_bytes = kKeptAttentionBytes;  // (tests: 0 to recompute always)
  // With bf16 activations, the rows products read (layer inputs and outputs, sublayer outputs,
  // attention's context) are rounded once and kept per layer (tests: false to round at each use).
  bool round_activations_once = true;
  // Backward only:
  float* layer_input = nullptr;  // [max(B·S, B·T), d]
  float* d_decoder = nullptr;    // [B·T, d]
  float* d_memory = nullptr;     // [B·S, d]
  nn::LayerScratch scratch;

  // Lays out the buffers for a batch of this shape, growing the arena if needed.
  void lay_out(Backend& be, const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward);
  std::size_t bytes() const { return arena_.capacity(); }

 private:
  void assign(const ModelConfig& c, int batch, int src_len, int tgt_len, bool backward, bool bf16_activations);
  Arena arena_;
};

}  // namespace attn
