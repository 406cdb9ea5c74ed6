#pragma once
// The paper's Transformer: encoder and decoder stacks over one shared embedding, with all
// parameters in one buffer (and all gradients in another of the same layout).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/device_buffer.h"
#include "model/model_config.h"
#include "model/parameter_layout.h"
#include "model/quantized_weights.h"
#include "core/token_batch.h"
#include "model/training_workspace.h"
#include "nn/decoder_layer.h"
#include "nn/dropout.h"
#include "nn/encoder_layer.h"
#include "nn/shared_embedding.h"

namespace attn {

// The shared embedding's gradient has two parts: the output layer's (done first, as soon as that
// layer's backward is) and the lookups' (the target's in the middle of the backward pass, the
// source's at its very end). By default both go into gradients(). With lookups_apart, gradients()
// gets the output layer's part only (output_part_final is told when it is done, before any call
// of final) and the lookups' part is added to lookup_gradients() instead, for a caller that sums
// the two parts across processes apart and adds them itself (train/: the lookups touch a few
// rows of the vocabulary, the output layer all of them).
struct EmbeddingGradient {
  bool lookups_apart = false;
  std::function<void()> output_part_final;
};

class Transformer {
 public:
  // Parameters start at zero: call initialize() or load_parameters(). With WeightFormat::int8
  // the matrices are kept in int8 (QuantizedWeights) and only the rest in float: such a model
  // translates and scores but does not train (gradients() throws).
  explicit Transformer(const ModelConfig& config, Backend& backend = cpu_backend(),
                       WeightFormat weights = WeightFormat::f32);

  const ModelConfig& config() const { return config_; }
  const ParameterLayout& layout() const { return layout_; }
  Backend& backend() const { return *backend_; }
  WeightFormat weight_format() const { return weights_; }
  std::int64_t parameter_count() const { return layout_.total(); }
  // The float parameter buffer in the layout's order (float32 models only: an int8 model keeps
  // only the tensors it does not quantize there). Taking it to write (the non-const overload)
  // drops the parameters' bf16 rounding kept for the next forward_backward (see below).
  float* parameters();
  const float* parameters() const;
  // The gradient buffer is allocated on first use (inference never needs it). Taking it (to write)
  // forgets that it is known to be zero (see below).
  float* gradients();

  // For an optimizer that writes, in its own pass over the parameters, what the next forward_backward
  // would otherwise compute in a pass of its own:
  // - parameter_rounding(): where the parameters rounded to bf16 go, or null where this model does
  //   not round its weights once (float32 products, set_weights_rounded_once(false), int8 weights);
  //   after writing the new parameters' rounding there (the bits Backend::to_bf16 gives), the
  //   optimizer calls parameters_rounded() and the next forward_backward uses it as it is.
  // - gradients_zeroed(): the optimizer has set the whole gradient to zero; the next
  //   zero_gradients() then has nothing to do.
  // Both hold until the parameters (or the gradient) are next taken to write.
  Bf16* parameter_rounding();
  void parameters_rounded() { rounding_current_ = true; }
  void gradients_zeroed() { gradients_zero_ = true; }

  void initialize(std::uint64_t seed);
  // All parameters in the layout's order; an int8 model quantizes its matrices.
  void set_parameters(const std::vector<float>& host);
  // All parameters in the layout's order; an int8 model's matrices as scale · q.
  std::vector<float> parameters_to_host() const;
  std::vector<float> gradients_to_host();

  // model.safetensors with the tensor names of docs/model-format.md (model_file.cpp); an int8 model
  // writes its matrices as I8 with their scales.
  void save_parameters(const std::filesystem::path& path,
                       const std::map<std::string, std::string>& metadata = {}) const;
  // Reads float32 or int8 files into either kind of model: float matrices into an int8 model
  // are quantized, int8 ones into a float32 model become scale · q.
  void load_parameters(const std::filesystem::path& path);

  void zero_gradients();

  // Training: forward and backward of one batch. Gradients are accumulated (not overwritten) so
  // several batches can form one update; the loss gradient is multiplied by grad_scale (e.g. one
  // over the number of target tokens of the whole update).
  //
  // final, where given, is told as the backward pass goes which part of the gradient buffer this
  // call will not change any more: final(first) means gradients()[first, parameter_count()) is done
  // (the layers are laid out encoder then decoder, and the backward pass finishes them from the last
  // decoder layer back; the shared embedding, at the start, is done last). first falls from call to
  // call and the last call has first = 0. The training floor starts summing the finished part
  // across processes while the rest is computed.
  using GradientsFinal = std::function<void(std::int64_t first)>;
  LossSums forward_backward(const TokenBatch& batch, const nn::Dropout& dropout, float grad_scale,
                            const GradientsFinal& final = {}, const EmbeddingGradient& embedding = {});
  // [vocab, d_model], zero until a backward pass with lookups_apart adds to it; the caller zeroes
  // what it has taken (zero_gradients() does not touch it).
  float* lookup_gradients();
  // Loss without dropout and without backward.
  LossSums evaluate(const TokenBatch& batch);
  // log P(target + EOS | source) of each sentence (forced decoding, no smoothing, no dropout).
  // A tap receives every layer's attention weights over the whole padded batch.
  std::vector<double> sentence_log_probs(const TokenBatch& batch, nn::AttentionTap* tap = nullptr);
  // The same reading without the output layer: only what `tap` receives (the attention of given
  // pairs, at a fraction of the cost where the vocabulary is large).
  void attend(const TokenBatch& batch, nn::AttentionTap* tap);
  // Runs the output layer and loss over at most `rows` target rows at a time (0: as many as
  // TrainingWorkspace::kLogitsBlockElements allow). Results do not depend on it; tests use it.
  void set_logits_block_rows(std::int64_t rows) { workspace_.max_logits_rows = rows; }
  // Keeps attention's probabilities and context per layer for backward only up to this many bytes
  // (TrainingWorkspace::kKeptAttentionBytes unless set; 0: always recomputed).
  void set_kept_attention_bytes(std::int64_t bytes) { workspace_.max_kept_attention_bytes = bytes; }
  // Where the backend's products round to bf16: the weights rounded once each time they change
  // (true, the default: by the optimizer's pass, or by forward_backward where nothing rounded them
  // since they were written) or by every product that reads them (false; the same bits, slower).
  void set_weights_rounded_once(bool once) { weights_rounded_once_ = once; }
  // Likewise for the activations: false (tests) keeps no bf16 rounding of the layers' inputs and
  // outputs, so each product rounds its float rows itself and the backward pass recomputes them.
  void set_activations_rounded_once(bool once) { workspace_.round_activations_once = once; }
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
  // Points the layers at their parameters and gradients; every float weight matrix's
  // MatrixRef::rounded into `rounded` (the parameters rounded to bf16 in the layout's order) where
  // it is given, none otherwise.
  void bind_layers(const Bf16* rounded = nullptr);
  friend class RoundedWeights;
  float* float_tensor(const std::string& name);  // in params_ (to write: drops the rounding)
  const float* float_tensor(const std::string& name) const;
  std::int64_t float_offset(const std::string& name) const;
  float* gradient_buffer();  // grads_, allocated (zeroed) on first use; gradients() to write
  float* positions_grad(bool decoder);
  void upload(const TokenBatch& batch);
  // Encoder and decoder; the output layer and the loss follow a block of rows at a time.
  void forward(const TokenBatch& batch, const nn::Dropout& dropout, nn::AttentionTap* tap = nullptr);
  // Calls block(first row, rows) with the logits of each block of target rows in workspace_.logits.
  template <typename Block>
  void for_each_logits_block(const TokenBatch& batch, Block&& block);
  // The last decoder layer's output as the output layer's products read it (with its bf16 rounding
  // where the workspace keeps one).
  nn::Activations last_decoder_output() const {
    return {workspace_.decoder_outputs.back(), workspace_.decoder.back().output_rounded};
  }
  void backward(const TokenBatch& batch, const nn::Dropout& dropout, const GradientsFinal& final);
  // Where each layer's parameters start in the layout (its first tensor's offset).
  std::int64_t layer_start(bool decoder, int layer) const;
  AttentionMask encoder_mask() const;
  AttentionMask decoder_mask() const;
  AttentionMask memory_mask() const;

  ModelConfig config_;
  ParameterLayout layout_;
  Backend* backend_;
  WeightFormat weights_;
  // Where each tensor kept in float lives in params_ (every tensor for float32 models).
  std::unordered_map<std::string, std::int64_t> float_offsets_;
  std::int64_t float_total_ = 0;
  DeviceBuffer<float> params_, grads_;
  DeviceBuffer<Bf16> rounded_params_;  // params_ rounded to bf16 for a forward_backward (RoundedWeights)
  bool weights_rounded_once_ = true;
  bool rounding_current_ = false;                // rounded_params_ holds params_ rounded (nothing wrote params_ since)
  bool gradients_zero_ = false;                  // grads_ is all zeros (nothing took it to write since)
  DeviceBuffer<float> lookup_grads_;             // [vocab, d_model]: the lookups' gradient kept apart
  std::unique_ptr<QuantizedWeights> quantized_;  // int8 models
  DeviceBuffer<float> sinusoids_;                // [max_positions, d_model] when positions are sinusoidal
  nn::SharedEmbedding embedding_;
  std::vector<nn::EncoderLayer> encoder_;
  std::vector<nn::DecoderLayer> decoder_;
  TrainingWorkspace workspace_;
};

}  // namespace attn
