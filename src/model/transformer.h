#pragma once
// The paper's Transformer: encoder and decoder stacks over one shared embedding, with all
// parameters in one buffer (and all gradients in another of the same layout).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kernels/device_buffer.h"
#include "model/model_config.h"
#include "model/parameter_layout.h"
#include "core/token_batch.h"
#include "model/training_workspace.h"
#include "nn/decoder_layer.h"
#include "nn/dropout.h"
#include "nn/encoder_layer.h"
#include "nn/shared_embedding.h"

namespace attn {

class Transformer {
 public:
  // Parameters start at zero: call initialize() or load_parameters().
  explicit Transformer(const ModelConfig& config, Backend& backend = cpu_backend());

  const ModelConfig& config() const { return config_; }
  const ParameterLayout& layout() const { return layout_; }
  Backend& backend() const { return *backend_; }
  std::int64_t parameter_count() const { return layout_.total(); }
  float* parameters() { return params_.data(); }
  const float* parameters() const { return params_.data(); }
  // The gradient buffer is allocated on first use (inference never needs it).
  float* gradients();

  void initialize(std::uint64_t seed);
  void set_parameters(const std::vector<float>& host);
  std::vector<float> parameters_to_host() const;
  std::vector<float> gradients_to_host();

  // model.safetensors with the tensor names of docs/model-format.md.
  void save_parameters(const std::filesystem::path& path,
                       const std::map<std::string, std::string>& metadata = {}) const;
  void load_parameters(const std::filesystem::path& path);

  void zero_gradients();

  // Training: forward and backward of one batch. Gradients are accumulated (not overwritten) so
  // several batches can form one update; the loss gradient is multiplied by grad_scale (e.g. one
  // over the number of target tokens of the whole update).
  LossSums forward_backward(const TokenBatch& batch, const nn::Dropout& dropout, float grad_scale);
  // Loss without dropout and without backward.
  LossSums evaluate(const TokenBatch& batch);
  // log P(target + EOS | source) of each sentence (forced decoding, no smoothing, no dropout).
  // A tap receives every layer's attention weights over the whole padded batch.
  std::vector<double> sentence_log_probs(const TokenBatch& batch, nn::AttentionTap* tap = nullptr);
  // Runs the output layer and loss over at most `rows` target rows at a time (0: as many as
  // TrainingWorkspace::kLogitsBlockElements allow). Results do not depend on it; tests use it.
  void set_logits_block_rows(std::int64_t rows) { workspace_.max_logits_rows = rows; }
  // Teacher-forced logits [batch · T, vocab] without dropout, copied to the host (tests, scoring).
  std::vector<float> logits(const TokenBatch& batch);

  std::size_t workspace_bytes() const { return workspace_.bytes(); }

  // The layers, for inference code that runs them its own way (incremental decoding).
  const nn::SharedEmbedding& embedding() const { return embedding_; }
  const std::vector<nn::EncoderLayer>& encoder_layers() const { return encoder_; }
  const std::vector<nn::DecoderLayer>& decoder_layers() const { return decoder_; }
  // [max_positions, d_model]: the sinusoids or the learned positions of one side.
  const float* positions(bool decoder) const;

 private:
  void bind_layers();
  float* positions_grad(bool decoder);
  void upload(const TokenBatch& batch);
  // Encoder and decoder; the output layer and the loss follow a block of rows at a time.
  void forward(const TokenBatch& batch, const nn::Dropout& dropout, nn::AttentionTap* tap = nullptr);
  // Calls block(first row, rows) with the logits of each block of target rows in workspace_.logits.
  template <typename Block>
  void for_each_logits_block(const TokenBatch& batch, Block&& block);
  void backward(const TokenBatch& batch, const nn::Dropout& dropout);
  AttentionMask encoder_mask() const;
  AttentionMask decoder_mask() const;
  AttentionMask memory_mask() const;

  ModelConfig config_;
  ParameterLayout layout_;
  Backend* backend_;
  DeviceBuffer<float> params_, grads_;
  DeviceBuffer<float> sinusoids_;  // [max_positions, d_model] when positions are sinusoidal
  nn::SharedEmbedding embedding_;
  std::vector<nn::EncoderLayer> encoder_;
  std::vector<nn::DecoderLayer> decoder_;
  TrainingWorkspace workspace_;
};

}  // namespace attn
