#include "decode/incremental_decoder.h"

#include <algorithm>

#include "core/error.h"
#include "nn/residual_norm.h"

namespace attn {

IncrementalDecoder::IncrementalDecoder(const Transformer& model)
    : model_(model),
      be_(model.backend()),
      c_(model.config()),
      kv_width_(static_cast<std::int64_t>(c_.heads) * (c_.d_k + c_.d_v)) {}

void IncrementalDecoder::start(const std::int32_t* src, const std::int32_t* src_lengths, int batch, int src_len,
                               int max_rows_per_sentence, int max_steps) {
  ATTN_CHECK(batch > 0 && src_len > 0 && max_rows_per_sentence > 0 && max_steps > 0, "empty decoding batch");
  if (src_len > c_.max_positions)
    throw Error("source of " + std::to_string(src_len) + " tokens is longer than the model's max_positions " +
                std::to_string(c_.max_positions));
  sentences_ = batch;
  rows_per_sentence_ = 1;
  src_len_ = src_len;
  max_steps_ = std::min(max_steps, c_.max_positions);
  position_ = 0;
  capacity_rows_ = batch * max_rows_per_sentence;
  const std::size_t n = static_cast<std::size_t>(batch) * src_len;
  src_.resize(be_, n);
  src_lengths_.resize(be_, batch);
  be_.copy_to_device(src_.data(), src, n * sizeof(std::int32_t));
  be_.copy_to_device(src_lengths_.data(), src_lengths, batch * sizeof(std::int32_t));
  sentence_of_.resize(batch);
  for (int b = 0; b < batch; ++b) sentence_of_[b] = b;
  ensure_buffers();
  if (tap_) tap_->begin_batch();
  encode(src_len);
}

void IncrementalDecoder::ensure_buffers() {
  const std::size_t rows = static_cast<std::size_t>(capacity_rows_);
  const std::size_t srows = static_cast<std::size_t>(sentences_) * src_len_;
  const std::size_t big_rows = std::max(rows, srows);
  const std::size_t d = c_.d_model;
  const std::size_t layers = c_.decoder_layers;
  self_kv_.resize(layers);
  memory_kv_.resize(layers);
  for (std::size_t l = 0; l < layers; ++l) {
    self_kv_[l].resize(be_, rows * max_steps_ * kv_width_);
    memory_kv_[l].resize(be_, srows * kv_width_);
  }
  lineage_.assign(rows * max_steps_, 0);
  lineage_spare_.assign(rows * max_steps_, 0);
  lineage_device_.resize(be_, rows * max_steps_);
  memory_rows_device_.resize(be_, rows);
  tokens_.resize(be_, rows);
  x_.resize(be_, big_rows * d);
  y_.resize(be_, big_rows * d);
  sub_.resize(be_, big_rows * d);
  qkv_.resize(be_, big_rows * c_.qkv_width());
  ctx_.resize(be_, big_rows * c_.heads * c_.d_v);
  // Encoder self-attention needs S×S per head; decoding needs at most max_steps (self) or
  // rows_per_sentence × S (cross) per head and sentence.
  const std::size_t probs = static_cast<std::size_t>(c_.heads) *
                            std::max({srows * src_len_, rows * max_steps_, rows * static_cast<std::size_t>(src_len_)});
  probs_.resize(be_, probs);
  hidden_.resize(be_, big_rows * c_.d_ff);
  logits_.resize(be_, rows * c_.vocab_size);
}

void IncrementalDecoder::encode(int src_len) {
  // The encoder's training path keeps every layer's activations for backward; here one set of
  // buffers serves all layers in turn.
  const int batch = sentences_;
  const std::int64_t rows = static_cast<std::int64_t>(batch) * src_len;
  const nn::Dropout none{};
  model_.embedding().embed(be_, src_.data(), batch, src_len, model_.positions(false), none, 0, x_.data());
  const AttentionMask mask{src_lengths_.data(), false, 0, c_.attention_window};
  nn::EncoderLayer::Cache cache;
  cache.attention = {qkv_.data(), probs_.data(), ctx_.data(), qkv_.data()};
  cache.attention_residual = {sub_.data(), nullptr, nullptr};
  cache.middle = y_.data();
  cache.hidden = {hidden_.data(), hidden_.data()};
  cache.ffn_residual = {sub_.data(), nullptr, nullptr};
  for (std::size_t l = 0; l < model_.encoder_layers().size(); ++l)
    model_.encoder_layers()[l].forward(be_, x_.data(), batch, src_len, mask, none, cache, x_.data(),
                                       {tap_, static_cast<int>(l)});
  // Project each decoder layer's encoder-decoder keys and values once.
  for (std::size_t l = 0; l < model_.decoder_layers().size(); ++l)
    model_.decoder_layers()[l].cross_attention.kv.forward(be_, x_.data(), rows, memory_kv_[l].data());
}

const float* IncrementalDecoder::step(const std::int32_t* tokens) {
  if (position_ >= max_steps_)
    throw Error("incremental decoder: more steps than the " + std::to_string(max_steps_) + " prepared");
  const int rows = this->rows();
  const int t = position_;
  const int d = c_.d_model;
  const std::int64_t cache_stride = static_cast<std::int64_t>(max_steps_) * kv_width_;
  be_.copy_to_device(tokens_.data(), tokens, rows * sizeof(std::int32_t));
  const nn::Dropout none{};
  // Position t's encoding: the table from row t, one position per "sentence" of length 1.
  model_.embedding().embed(be_, tokens_.data(), rows, 1, model_.positions(true) + static_cast<std::int64_t>(t) * d,
                           none, 0, x_.data());
  if (tap_) tap_->begin_step(t);
  // This step's position of row r goes to cached row r; row r reads its sentence's memory.
  memory_rows_.resize(rows);
  for (int r = 0; r < rows; ++r) {
    lineage_[static_cast<std::size_t>(r) * max_steps_ + t] = r;
    memory_rows_[r] = sentence_of_[r / rows_per_sentence_];
  }
  be_.copy_to_device(lineage_device_.data(), lineage_.data(),
                     static_cast<std::size_t>(rows) * max_steps_ * sizeof(std::int32_t));
  be_.copy_to_device(memory_rows_device_.data(), memory_rows_.data(), rows * sizeof(std::int32_t));
  const AttentionMask self_mask{nullptr, false, t, c_.attention_window};
  const AttentionMask memory_mask{src_lengths_.data(), false, 0, 0};
  for (std::size_t l = 0; l < model_.decoder_layers().size(); ++l) {
    // One buffer set serves every layer in turn: the sublayer sums in sub_, the layer's input
    // in x_ (overwritten by the cross-attention sublayer's output once read), its output in y_.
    nn::DecoderLayer::Cache cache;
    cache.self_attention = {qkv_.data(), probs_.data(), ctx_.data(), qkv_.data()};
    cache.self_residual = {sub_.data(), nullptr, nullptr};
    cache.after_self = y_.data();
    // The memory's keys and values come from memory_kv_: no kv of this step's own.
    cache.cross_attention = {qkv_.data(), nullptr, probs_.data(), ctx_.data(), qkv_.data(), {}};
    cache.cross_residual = {sub_.data(), nullptr, nullptr};
    cache.after_cross = x_.data();
    cache.hidden = {hidden_.data(), hidden_.data()};
    cache.ffn_residual = {sub_.data(), nullptr, nullptr};
    const nn::DecoderLayer::Incremental incremental{
        {self_kv_[l].data(), cache_stride, t, lineage_device_.data(), max_steps_},
        {memory_kv_[l].data(), static_cast<std::int64_t>(src_len_) * kv_width_, src_len_, memory_rows_device_.data(),
         0}};
    model_.decoder_layers()[l].forward(be_, x_.data(), nn::Activations{}, sentences_, rows_per_sentence_, src_len_,
                                       self_mask, memory_mask, none, cache, y_.data(), &incremental,
                                       {tap_, static_cast<int>(l)});
    std::swap(x_, y_);
  }
  if (output_ids_.empty())
    model_.embedding().project(be_, x_.data(), rows, logits_.data());
  else
    output_layer_.forward(be_, x_.data(), rows, logits_.data());
  be_.log_softmax(logits_.data(), rows, output_width());
  ++position_;
  return logits_.data();
}

void IncrementalDecoder::set_output_ids(std::vector<std::int32_t> ids) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    ATTN_CHECK(ids[i] >= 0 && ids[i] < c_.vocab_size && (i == 0 || ids[i] > ids[i - 1]),
               "output ids must be ascending, distinct vocabulary ids");
  output_ids_ = std::move(ids);
  if (output_ids_.empty()) return;
  const std::int64_t n = static_cast<std::int64_t>(output_ids_.size()), d = c_.d_model;
  const nn::Linear full = model_.embedding().output_layer();
  const MatrixRef weights = full.weight_operand();  // [vocab, d] stored, read transposed
  const std::size_t element = element_bytes(weights.dtype);
  output_ids_device_.resize(be_, static_cast<std::size_t>(n));
  be_.copy_to_device(output_ids_device_.data(), output_ids_.data(), static_cast<std::size_t>(n) * sizeof(std::int32_t));
  output_rows_.resize(be_, static_cast<std::size_t>(n * d) * element);
  const bool s8 = weights.dtype == DType::s8;
  output_scales_.resize(be_, s8 ? static_cast<std::size_t>(n) : 0);
  output_row_sums_.resize(be_, s8 ? static_cast<std::size_t>(n) : 0);
  be_.gather_weight_rows(weights, output_ids_device_.data(), n, d, output_rows_.data(),
                         s8 ? output_scales_.data() : nullptr, s8 ? output_row_sums_.data() : nullptr);
  output_layer_ = nn::Linear{};
  output_layer_.in = static_cast<int>(d);
  output_layer_.out = static_cast<int>(n);
  output_layer_.weight = {output_rows_.data(),
                          weights.dtype,
                          d,
                          Trans::No,
                          s8 ? output_scales_.data() : nullptr,
                          s8 ? output_row_sums_.data() : nullptr};
}

int IncrementalDecoder::output_column(std::int32_t id) const {
  if (output_ids_.empty()) return id >= 0 && id < c_.vocab_size ? id : -1;
  const auto it = std::lower_bound(output_ids_.begin(), output_ids_.end(), id);
  return it != output_ids_.end() && *it == id ? static_cast<int>(it - output_ids_.begin()) : -1;
}

void IncrementalDecoder::select(const std::vector<std::int32_t>& sentences, const std::vector<std::int32_t>& origin,
                                int rows_per_sentence) {
  const int kept = static_cast<int>(sentences.size());
  const int new_rows = static_cast<int>(origin.size());
  ATTN_CHECK(new_rows == kept * rows_per_sentence, "select: wrong number of rows");
  ATTN_CHECK(new_rows <= capacity_rows_, "select: more rows than prepared");
  // Reordering rewrites which cached rows hold each row's positions; nothing cached moves.
  for (int r = 0; r < new_rows; ++r) {
    ATTN_CHECK(origin[r] >= 0 && origin[r] < rows(), "select: origin row out of range");
    std::copy_n(lineage_.begin() + static_cast<std::ptrdiff_t>(origin[r]) * max_steps_, position_,
                lineage_spare_.begin() + static_cast<std::ptrdiff_t>(r) * max_steps_);
  }
  std::swap(lineage_, lineage_spare_);
  std::vector<std::int32_t> sentence_of;
  for (int s : sentences) {
    ATTN_CHECK(s >= 0 && s < sentences_, "select: sentence out of range");
    sentence_of.push_back(sentence_of_[s]);
  }
  sentence_of_ = std::move(sentence_of);
  sentences_ = kept;
  rows_per_sentence_ = rows_per_sentence;
}

}  // namespace attn
