#include "model/transformer.h"

#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/special_tokens.h"
#include "model/initialization.h"
#include "nn/positional_encoding.h"

namespace attn {
namespace {

// Dropout stream ids: one per site, so that no two sites share a mask.
constexpr std::uint64_t kSourceEmbeddingSite = 1, kTargetEmbeddingSite = 2;
constexpr std::uint64_t kEncoderSiteBase = 1000, kDecoderSiteBase = 2000000, kSitesPerLayer = 16;

}  // namespace

// Sizes are checked before the layout is built (absurd layer counts would take forever) and
// before anything is allocated.
static const ModelConfig& validated(const ModelConfig& config) {
  config.validate();
  return config;
}

Transformer::Transformer(const ModelConfig& config, Backend& backend, WeightFormat weights)
    : config_(validated(config)), layout_(config_), backend_(&backend), weights_(weights) {
  for (const auto& t : layout_.tensors()) {
    if (weights_ == WeightFormat::int8 && is_quantized_tensor(t)) continue;
    float_offsets_[t.name] = float_total_;
    float_total_ += t.size;
  }
  params_.resize(backend, static_cast<std::size_t>(float_total_));
  backend.fill(params_.data(), float_total_, 0.0f);
  if (weights_ == WeightFormat::int8) quantized_ = std::make_unique<QuantizedWeights>(layout_, backend);
  if (config_.positions == PositionEncoding::Sinusoidal) {
    const auto table = nn::sinusoidal_positions(config_.max_positions, config_.d_model);
    sinusoids_.resize(backend, table.size());
    backend.copy_to_device(sinusoids_.data(), table.data(), table.size() * sizeof(float));
  }
  bind_layers();
}

float* Transformer::parameters() {
  ATTN_CHECK(weights_ == WeightFormat::f32, "an int8 model has no float parameter buffer of the whole layout");
  rounding_current_ = false;
  return params_.data();
}

const float* Transformer::parameters() const {
  ATTN_CHECK(weights_ == WeightFormat::f32, "an int8 model has no float parameter buffer of the whole layout");
  return params_.data();
}

std::int64_t Transformer::float_offset(const std::string& name) const {
  const auto it = float_offsets_.find(name);
  if (it == float_offsets_.end()) throw Error("tensor '" + name + "' is not kept in float");
  return it->second;
}

float* Transformer::float_tensor(const std::string& name) {
  const std::int64_t at = float_offset(name);
  rounding_current_ = false;
  return params_.data() + at;
}

const float* Transformer::float_tensor(const std::string& name) const { return params_.data() + float_offset(name); }

float* Transformer::gradients() {
  float* g = gradient_buffer();
  gradients_zero_ = false;
  return g;
}

float* Transformer::gradient_buffer() {
  if (weights_ != WeightFormat::f32)
    throw Error("an int8 model is for translating and scoring only: it cannot be trained (load the float32 model)");
  if (grads_.size() == 0) {
    grads_.resize(*backend_, static_cast<std::size_t>(layout_.total()));
    backend_->fill(grads_.data(), layout_.total(), 0.0f);
    gradients_zero_ = true;
    bind_layers();
  }
  return grads_.data();
}

Bf16* Transformer::parameter_rounding() {
  if (!weights_rounded_once_ || !backend_->keeps_bf16_activations() || weights_ != WeightFormat::f32) return nullptr;
  const auto n = static_cast<std::size_t>(layout_.total());
  if (rounded_params_.size() != n) {
    rounded_params_.resize(*backend_, n);
    rounding_current_ = false;
  }
  return rounded_params_.data();
}

void Transformer::bind_layers(const Bf16* rounded) {
  const ModelConfig& c = config_;
  float* grads = grads_.size() ? grads_.data() : nullptr;
  const bool int8 = weights_ == WeightFormat::int8;
  // A weight matrix [rows, cols]: its s8 rows where the model was quantized, else its floats (and
  // their rounding where there is one).
  auto matrix = [&](const std::string& name, int cols) {
    if (int8 && quantized_->contains(name)) return quantized_->matrix(name, Trans::No);
    MatrixRef m = f32_matrix(float_tensor(name), cols);
    if (rounded) m.rounded = rounded + float_offsets_.at(name);
    return m;
  };
  auto grad = [&](const std::string& name) -> float* { return grads ? grads + layout_.find(name).offset : nullptr; };
  // A fused product's weight and bias start at its first part (the layout keeps parts adjacent).
  auto fused = [&](const std::string& p, const std::string& first, int in, int out) {
    return nn::Linear{matrix(p + first + ".weight", in),
                      float_tensor(p + first + ".bias"),
                      grad(p + first + ".weight"),
                      grad(p + first + ".bias"),
                      in,
                      out};
  };
  auto linear = [&](const std::string& p, int in, int out) { return fused(p, "", in, out); };
  auto norm = [&](const std::string& p) {
    return nn::LayerNormParams{float_tensor(p + ".weight"),
                               float_tensor(p + ".bias"),
                               grad(p + ".weight"),
                               grad(p + ".bias"),
                               c.d_model,
                               c.layernorm_eps};
  };
  const int d = c.d_model, hk = c.heads * c.d_k, hv = c.heads * c.d_v;
  embedding_ = {matrix("embedding.weight", d), grad("embedding.weight"), c.vocab_size, d,
                std::sqrt(static_cast<float>(d))};
  encoder_.assign(c.encoder_layers, {});
  for (int i = 0; i < c.encoder_layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i) + ".";
    auto& l = encoder_[i];
    l.attention = {fused(p + "self_attn.", "q_proj", d, c.qkv_width()), linear(p + "self_attn.out_proj", hv, d),
                   c.heads, c.d_k, c.d_v};
    l.attention_norm = norm(p + "self_attn_norm");
    l.ffn = {linear(p + "ffn.fc1", d, c.d_ff), linear(p + "ffn.fc2", c.d_ff, d)};
    l.ffn_norm = norm(p + "ffn_norm");
    l.dropout_site = kEncoderSiteBase + kSitesPerLayer * i;
  }
  decoder_.assign(c.decoder_layers, {});
  for (int i = 0; i < c.decoder_layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i) + ".";
    auto& l = decoder_[i];
    l.self_attention = {fused(p + "self_attn.", "q_proj", d, c.qkv_width()), linear(p + "self_attn.out_proj", hv, d),
                        c.heads, c.d_k, c.d_v};
    l.self_attention_norm = norm(p + "self_attn_norm");
    l.cross_attention = {fused(p + "cross_attn.", "q_proj", d, hk),
                         fused(p + "cross_attn.", "k_proj", d, hk + hv),
                         linear(p + "cross_attn.out_proj", hv, d),
                         c.heads,
                         c.d_k,
                         c.d_v};
    l.cross_attention_norm = norm(p + "cross_attn_norm");
    l.ffn = {linear(p + "ffn.fc1", d, c.d_ff), linear(p + "ffn.fc2", c.d_ff, d)};
    l.ffn_norm = norm(p + "ffn_norm");
    l.dropout_site = kDecoderSiteBase + kSitesPerLayer * i;
  }
}

void Transformer::initialize(std::uint64_t seed) {
  std::vector<float> host;
  initialize_parameters(layout_, config_, seed, host);
  set_parameters(host);
}

void Transformer::set_parameters(const std::vector<float>& host) {
  ATTN_CHECK(static_cast<std::int64_t>(host.size()) == layout_.total(), "parameter count mismatch");
  if (weights_ == WeightFormat::f32) {
    backend_->copy_to_device(parameters(), host.data(), host.size() * sizeof(float));
    return;
  }
  for (const auto& t : layout_.tensors()) {
    if (quantized_->contains(t.name))
      quantized_->quantize(t.name, host.data() + t.offset);
    else
      backend_->copy_to_device(float_tensor(t.name), host.data() + t.offset, static_cast<std::size_t>(t.size) * 4);
  }
}

std::vector<float> Transformer::parameters_to_host() const {
  std::vector<float> host(static_cast<std::size_t>(layout_.total()));
  if (weights_ == WeightFormat::f32) {
    backend_->copy_to_host(host.data(), params_.data(), host.size() * sizeof(float));
    return host;
  }
  std::vector<std::int8_t> q;
  std::vector<float> scale;
  for (const auto& t : layout_.tensors()) {
    float* out = host.data() + t.offset;
    if (!quantized_->contains(t.name)) {
      backend_->copy_to_host(out, float_tensor(t.name), static_cast<std::size_t>(t.size) * sizeof(float));
      continue;
    }
    quantized_->get(t.name, q, scale);
    const std::int64_t cols = t.shape[1];
    for (std::int64_t i = 0; i < t.size; ++i) out[i] = scale[static_cast<std::size_t>(i / cols)] * q[i];
  }
  return host;
}

std::vector<float> Transformer::gradients_to_host() {
  std::vector<float> host(static_cast<std::size_t>(layout_.total()));
  backend_->copy_to_host(host.data(), gradient_buffer(), host.size() * sizeof(float));
  return host;
}

float* Transformer::lookup_gradients() {
  if (lookup_grads_.size() == 0) {
    const std::int64_t n = static_cast<std::int64_t>(config_.vocab_size) * config_.d_model;
    lookup_grads_.resize(*backend_, static_cast<std::size_t>(n));
    backend_->fill(lookup_grads_.data(), n, 0.0f);
  }
  return lookup_grads_.data();
}

void Transformer::zero_gradients() {
  if (gradients_zero_) return;
  backend_->fill(gradients(), layout_.total(), 0.0f);
  gradients_zero_ = true;
}

const float* Transformer::positions(bool decoder) const {
  if (config_.positions == PositionEncoding::Sinusoidal) return sinusoids_.data();
  return float_tensor(decoder ? "decoder.positions.weight" : "encoder.positions.weight");
}

float* Transformer::positions_grad(bool decoder) {
  if (config_.positions == PositionEncoding::Sinusoidal) return nullptr;
  return gradients() + layout_.find(decoder ? "decoder.positions.weight" : "encoder.positions.weight").offset;
}

AttentionMask Transformer::encoder_mask() const { return {workspace_.src_lengths, false, 0, config_.attention_window}; }
AttentionMask Transformer::decoder_mask() const { return {workspace_.tgt_lengths, true, 0, config_.attention_window}; }
AttentionMask Transformer::memory_mask() const { return {workspace_.src_lengths, false, 0, 0}; }

void Transformer::upload(const TokenBatch& b) {
  if (b.src_len > config_.max_positions || b.tgt_len > config_.max_positions)
    throw Error("batch has a sequence of " + std::to_string(std::max(b.src_len, b.tgt_len)) +
                " tokens, longer than the model's max_positions " + std::to_string(config_.max_positions));
  const std::size_t s = static_cast<std::size_t>(b.batch) * b.src_len * sizeof(std::int32_t);
  const std::size_t t = static_cast<std::size_t>(b.batch) * b.tgt_len * sizeof(std::int32_t);
  const std::size_t n = static_cast<std::size_t>(b.batch) * sizeof(std::int32_t);
  backend_->copy_to_device(workspace_.src, b.src, s);
  backend_->copy_to_device(workspace_.tgt_in, b.tgt_in, t);
  backend_->copy_to_device(workspace_.tgt_out, b.tgt_out, t);
  backend_->copy_to_device(workspace_.src_lengths, b.src_lengths, n);
  backend_->copy_to_device(workspace_.tgt_lengths, b.tgt_lengths, n);
}

void Transformer::forward(const TokenBatch& b, const nn::Dropout& dropout, nn::AttentionTap* tap) {
  Backend& be = *backend_;
  TrainingWorkspace& ws = workspace_;
  const std::int64_t source_values = static_cast<std::int64_t>(b.batch) * b.src_len * config_.d_model;
  const std::int64_t target_values = static_cast<std::int64_t>(b.batch) * b.tgt_len * config_.d_model;
  // Each layer's input in float, with its bf16 rounding where the workspace keeps one.
  embedding_.embed(be, ws.src, b.batch, b.src_len, positions(false), dropout, kSourceEmbeddingSite, ws.encoder_input);
  nn::Activations x = nn::with_rounding(be, ws.encoder_input, source_values, ws.encoder_input_rounded);
  for (std::size_t i = 0; i < encoder_.size(); ++i) {
    encoder_[i].forward(be, x, b.batch, b.src_len, encoder_mask(), dropout, ws.encoder[i], ws.encoder_outputs[i],
                        {tap, static_cast<int>(i)});
    x = {ws.encoder_outputs[i], ws.encoder[i].output_rounded};
  }
  const nn::Activations memory = x;
  embedding_.embed(be, ws.tgt_in, b.batch, b.tgt_len, positions(true), dropout, kTargetEmbeddingSite, ws.decoder_input);
  x = nn::with_rounding(be, ws.decoder_input, target_values, ws.decoder_input_rounded);
  for (std::size_t i = 0; i < decoder_.size(); ++i) {
    decoder_[i].forward(be, x, memory, b.batch, b.tgt_len, b.src_len, decoder_mask(), memory_mask(), dropout,
                        ws.decoder[i], ws.decoder_outputs[i], nullptr, {tap, static_cast<int>(i)});
    x = {ws.decoder_outputs[i], ws.decoder[i].output_rounded};
  }
}

template <typename Block>
void Transformer::for_each_logits_block(const TokenBatch& b, Block&& block) {
  const std::int64_t rows = static_cast<std::int64_t>(b.batch) * b.tgt_len;
  for (std::int64_t first = 0; first < rows; first += workspace_.logits_rows) {
    const std::int64_t count = std::min(workspace_.logits_rows, rows - first);
    embedding_.project(*backend_, last_decoder_output().offset(first * config_.d_model), count, workspace_.logits);
    block(first, count);
  }
}

std::int64_t Transformer::layer_start(bool decoder, int layer) const {
  return layout_
      .find((decoder ? "decoder.layers." : "encoder.layers.") + std::to_string(layer) + ".self_attn.q_proj.weight")
      .offset;
}

void Transformer::backward(const TokenBatch& b, const nn::Dropout& dropout, const GradientsFinal& final) {
  Backend& be = *backend_;
  TrainingWorkspace& ws = workspace_;
  const std::int64_t rows_t = static_cast<std::int64_t>(b.batch) * b.tgt_len;
  const std::int64_t rows_s = static_cast<std::int64_t>(b.batch) * b.src_len;
  // ws.d_decoder holds ∂L/∂(last decoder output), from the output layer.
  // A layer's input: the embeddings for the first, else the previous layer's output; their bf16
  // rounding where the forward pass kept it (only products read a layer's input here), else
  // recomputed in float.
  auto input_of = [&](const auto& layers, const auto& caches, int i, const float* embeddings,
                      const Bf16* embeddings_rounded, std::int64_t rows) -> nn::Activations {
    if (i == 0) return embeddings_rounded ? nn::Activations(embeddings_rounded) : nn::Activations(embeddings);
    if (caches[i - 1].output_rounded) return caches[i - 1].output_rounded;
    residual_norm_output(be, layers[i - 1].ffn_norm, caches[i - 1].ffn_residual, rows, ws.layer_input);
    return ws.layer_input;
  };
  const Bf16* memory_rounded = ws.encoder.back().output_rounded;
  const nn::Activations memory =
      memory_rounded ? nn::Activations(memory_rounded) : nn::Activations(ws.encoder_outputs.back());
  be.fill(ws.d_memory, rows_s * config_.d_model, 0.0f);
  for (int i = static_cast<int>(decoder_.size()) - 1; i >= 0; --i) {
    const nn::Activations x = input_of(decoder_, ws.decoder, i, ws.decoder_input, ws.decoder_input_rounded, rows_t);
    decoder_[i].backward(be, x, memory, b.batch, b.tgt_len, b.src_len, decoder_mask(), memory_mask(), dropout,
                         ws.decoder[i], ws.scratch, ws.d_decoder, ws.d_memory);
    if (final) final(layer_start(true, i));
  }
  embedding_.embed_backward(be, ws.tgt_in, b.batch, b.tgt_len, ws.d_decoder, dropout, kTargetEmbeddingSite,
                            positions_grad(true));
  for (int i = static_cast<int>(encoder_.size()) - 1; i >= 0; --i) {
    const nn::Activations x = input_of(encoder_, ws.encoder, i, ws.encoder_input, ws.encoder_input_rounded, rows_s);
    encoder_[i].backward(be, x, b.batch, b.src_len, encoder_mask(), dropout, ws.encoder[i], ws.scratch, ws.d_memory);
    if (final) final(layer_start(false, i));
  }
  embedding_.embed_backward(be, ws.src, b.batch, b.src_len, ws.d_memory, dropout, kSourceEmbeddingSite,
                            positions_grad(false));
  if (final) final(0);
}

// For one forward_backward, where the backend's products round their float inputs to bf16 anyway
// (Backend::keeps_bf16_activations): the parameters rounded once (to_bf16: the same bits as each
// product's own rounding), and every weight matrix pointing its products at them. Each weight is
// read by two products a batch (the forward one and the input's gradient), which rounded all 7.6M
// of the cpu-hour preset's parameters twice. The rounding is kept while it is current: the
// optimizer writes the next one in its own pass (parameter_rounding), and any write to the
// parameters drops it. Bound for the call only and cleared on the way out: nothing else reads it.
class RoundedWeights {
 public:
  explicit RoundedWeights(Transformer& model) : model_(model) {
    Bf16* rounded = model.parameter_rounding();
    if (!rounded) return;
    if (!model.rounding_current_) {
      model.backend().to_bf16(std::as_const(model).parameters(), model.parameter_count(), rounded);
      model.rounding_current_ = true;
    }
    model.bind_layers(rounded);
    bound_ = true;
  }
  ~RoundedWeights() {
    if (bound_) model_.bind_layers();
  }
  RoundedWeights(const RoundedWeights&) = delete;
  RoundedWeights& operator=(const RoundedWeights&) = delete;

 private:
  Transformer& model_;
  bool bound_ = false;
};

LossSums Transformer::forward_backward(const TokenBatch& b, const nn::Dropout& dropout, float grad_scale,
                                       const GradientsFinal& final, const EmbeddingGradient& embedding) {
  gradients();  // make sure the layers see a gradient buffer
  const RoundedWeights rounded(*this);
  // Where the lookups' gradient goes for this call (the embedding's own gradient otherwise).
  embedding_.lookup_grad = embedding.lookups_apart ? lookup_gradients() : nullptr;
  workspace_.lay_out(*backend_, config_, b.batch, b.src_len, b.tgt_len, /*backward=*/true);
  upload(b);
  forward(b, dropout);
  LossSums sums;
  const int d = config_.d_model;
  // The loss turns each block's logits into their gradient as the output layer's products read it,
  // which goes straight back through that layer: in float over the logits themselves, or in bf16
  // into the scratch where the backend keeps bf16 activations.
  const nn::RowBuffer d_logits =
      workspace_.scratch.dy_read.dtype == DType::bf16 ? workspace_.scratch.dy_read : nn::RowBuffer(workspace_.logits);
  for_each_logits_block(b, [&](std::int64_t first, std::int64_t count) {
    const nn::Activations y = last_decoder_output().offset(first * d);
    float* dy = workspace_.d_decoder + first * d;
    sums +=
        backend_->cross_entropy(workspace_.logits, workspace_.tgt_out + first, count, config_.vocab_size,
                                config_.label_smoothing, kPadId, grad_scale, nullptr, d_logits.data, d_logits.dtype);
    embedding_.project_backward(*backend_, y, count, d_logits.read(), dy);
  });
  if (embedding.lookups_apart && embedding.output_part_final) embedding.output_part_final();
  backward(b, dropout, final);
  embedding_.lookup_grad = nullptr;
  return sums;
}

LossSums Transformer::evaluate(const TokenBatch& b) {
  workspace_.lay_out(*backend_, config_, b.batch, b.src_len, b.tgt_len, /*backward=*/false);
  upload(b);
  forward(b, nn::Dropout{});
  LossSums sums;
  for_each_logits_block(b, [&](std::int64_t first, std::int64_t count) {
    sums += backend_->cross_entropy(workspace_.logits, workspace_.tgt_out + first, count, config_.vocab_size,
                                    config_.label_smoothing, kPadId, 0.0f, nullptr, nullptr, DType::f32);
  });
  return sums;
}

std::vector<double> Transformer::sentence_log_probs(const TokenBatch& b, nn::AttentionTap* tap) {
  workspace_.lay_out(*backend_, config_, b.batch, b.src_len, b.tgt_len, /*backward=*/false);
  upload(b);
  forward(b, nn::Dropout{}, tap);
  const std::int64_t rows = static_cast<std::int64_t>(b.batch) * b.tgt_len;
  DeviceBuffer<float> row_nll(*backend_, static_cast<std::size_t>(rows));
  for_each_logits_block(b, [&](std::int64_t first, std::int64_t count) {
    backend_->cross_entropy(workspace_.logits, workspace_.tgt_out + first, count, config_.vocab_size, 0.0f, kPadId,
                            0.0f, row_nll.data() + first, nullptr, DType::f32);
  });
  std::vector<float> host(static_cast<std::size_t>(rows));
  backend_->copy_to_host(host.data(), row_nll.data(), host.size() * sizeof(float));
  std::vector<double> out(static_cast<std::size_t>(b.batch), 0.0);
  for (int s = 0; s < b.batch; ++s)
    for (int t = 0; t < b.tgt_len; ++t) out[s] -= host[static_cast<std::size_t>(s) * b.tgt_len + t];
  return out;
}

void Transformer::attend(const TokenBatch& b, nn::AttentionTap* tap) {
  workspace_.lay_out(*backend_, config_, b.batch, b.src_len, b.tgt_len, /*backward=*/false);
  upload(b);
  forward(b, nn::Dropout{}, tap);
}

std::vector<float> Transformer::logits(const TokenBatch& b) {
  workspace_.lay_out(*backend_, config_, b.batch, b.src_len, b.tgt_len, /*backward=*/false);
  upload(b);
  forward(b, nn::Dropout{});
  std::vector<float> host(static_cast<std::size_t>(b.batch) * b.tgt_len * config_.vocab_size);
  for_each_logits_block(b, [&](std::int64_t first, std::int64_t count) {
    backend_->copy_to_host(host.data() + first * config_.vocab_size, workspace_.logits,
                           static_cast<std::size_t>(count) * config_.vocab_size * sizeof(float));
  });
  return host;
}

}  // namespace attn
