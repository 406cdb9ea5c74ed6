#pragma once
// Incremental decoding: the encoder runs once per batch, each decoder layer's encoder-decoder
// keys and values are projected once per sentence, and each decoder layer caches its
// self-attention keys and values, so a new target token costs one position, not the prefix.
//
// Hypotheses are rows; the rows of one sentence are contiguous (beam search keeps `beam` rows per
// sentence), so encoder-decoder attention treats a sentence's hypotheses as its queries.
#include <cstdint>
#include <vector>

#include "kernels/device_buffer.h"
#include "model/transformer.h"
#include "nn/linear.h"

namespace attn {

class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Transformer& model);

  // Encodes `batch` sources (host ids [batch, src_len] padded, lengths include EOS) and prepares
  // caches for up to `max_rows_per_sentence` hypotheses per sentence and `max_steps` target
  // positions. Decoding starts with one row per sentence.
  void start(const std::int32_t* src, const std::int32_t* src_lengths, int batch, int src_len,
             int max_rows_per_sentence, int max_steps);

  // Feeds one token per hypothesis row (host, [sentences() · rows_per_sentence]) at the next
  // position; returns log-probabilities [rows, vocab] in backend memory.
  const float* step(const std::int32_t* tokens);

  // Chooses what to decode next: the given sentences (indices into the current ones, ascending)
  // with rows_per_sentence hypothesis rows each, new row r continuing from current row origin[r]
  // (of the same sentence). Finished sentences are dropped this way. Nothing cached is copied:
  // only the table of which cached row holds each row's positions is rewritten.
  void select(const std::vector<std::int32_t>& sentences, const std::vector<std::int32_t>& origin,
              int rows_per_sentence);

  // Restricts the output layer to these vocabulary ids (ascending and distinct: a shortlist):
  // step() then returns log-probabilities [rows, ids.size()] normalised over them, column j
  // for ids[j]. Empty: the whole vocabulary. The output layer's rows are gathered here, in the
  // weights' own type; the setting holds for every later start() until changed.
  void set_output_ids(std::vector<std::int32_t> ids);
  const std::vector<std::int32_t>& output_ids() const { return output_ids_; }
  int output_width() const { return output_ids_.empty() ? c_.vocab_size : static_cast<int>(output_ids_.size()); }
  // The column of `id` in step()'s rows; -1 if the shortlist leaves it out.
  int output_column(std::int32_t id) const;

  // Where the layers report their attention weights (null: nowhere). Set it before start():
  // beam search decides at its start whether to follow hypotheses' rows for it.
  void set_attention_tap(nn::AttentionTap* tap) { tap_ = tap; }
  nn::AttentionTap* attention_tap() const { return tap_; }

  const ModelConfig& config() const { return c_; }
  Backend& backend() const { return be_; }
  int sentences() const { return sentences_; }
  int rows_per_sentence() const { return rows_per_sentence_; }
  int rows() const { return sentences_ * rows_per_sentence_; }
  int position() const { return position_; }  // tokens fed so far

 private:
  void encode(int src_len);
  void ensure_buffers();

  const Transformer& model_;
  Backend& be_;
  ModelConfig c_;
  int sentences_ = 0, rows_per_sentence_ = 0, src_len_ = 0, max_steps_ = 0, position_ = 0;
  int capacity_rows_ = 0;
  nn::AttentionTap* tap_ = nullptr;
  std::int64_t kv_width_ = 0;  // h·d_k + h·d_v per cached position

  DeviceBuffer<std::int32_t> src_, src_lengths_, tokens_;
  // Nothing cached moves when hypotheses are reordered or sentences finish: row r's position p
  // is in cached row lineage_[r·max_steps + p] (a new position goes to cached row r, which no
  // row has reached yet), and row r reads the memory of the batch's sentence memory_rows_[r].
  std::vector<std::int32_t> lineage_, lineage_spare_, sentence_of_, memory_rows_;
  DeviceBuffer<std::int32_t> lineage_device_, memory_rows_device_;
  std::vector<DeviceBuffer<float>> self_kv_;    // per layer [rows, max_steps, kv_width]
  std::vector<DeviceBuffer<float>> memory_kv_;  // per layer [batch, S, kv_width]
  // Step temporaries, sized for the current rows.
  DeviceBuffer<float> x_, y_, sub_, qkv_, ctx_, probs_, hidden_, logits_;
  // The shortlist: its ids, and the output layer's rows for them (bytes of the weights' type;
  // with s8 weights their scales and row sums too).
  std::vector<std::int32_t> output_ids_;
  DeviceBuffer<std::int32_t> output_ids_device_, output_row_sums_;
  DeviceBuffer<std::int8_t> output_rows_;
  DeviceBuffer<float> output_scales_;
  nn::Linear output_layer_;
};

}  // namespace attn
