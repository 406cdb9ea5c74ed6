#pragma once
// Attention export: which attentions to keep (AttentionSelection), and a tap that copies them to
// the host while a batch is decoded (AttentionRecorder) and then cuts out one sentence's
// matrices — for beam search, those of the hypothesis actually output: at every step, the row
// its own prefix occupied then (rows move as the beam is reordered), never a beam slot's.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "inspect/attention_record.h"
#include "inspect/word_alignment.h"
#include "model/model_config.h"
#include "nn/attention_tap.h"

namespace attn {

struct AttentionSelection {
  bool cross = true;          // encoder-decoder attention
  bool decoder_self = false;  // the decoder's (causal) self-attention
  bool encoder_self = false;  // the encoder's self-attention
  std::vector<int> layers;    // layers to keep (from 0); empty: all
  std::vector<int> heads;     // heads to keep (from 0); empty: all

  bool wants(nn::AttentionSite site, int layer) const;
  // Throws Error naming the layer or head the model does not have, or an empty selection; sorts
  // the layers and heads and drops repeats (records list matrices by layer, then head).
  void check(const ModelConfig& config);
  std::vector<int> chosen_heads(int heads_in_model) const;
};

// A text equal for two selections exactly when every field is equal (see cache_key of
// decode/search_options.h).
std::string cache_key(const AttentionSelection& selection);

// Parses "cross,decoder_self,encoder_self" (any subset; "all") into the selection's kinds, and
// "0,2,5" (or "all") into layer or head lists. Errors name the option and the accepted values.
void parse_attention_kinds(const std::string& text, AttentionSelection& selection);
std::vector<int> parse_index_list(const std::string& option, const std::string& text);

class AttentionRecorder : public nn::AttentionTap {
 public:
  AttentionRecorder(Backend& backend, AttentionSelection selection, int heads);

  void clear();  // forgets what was recorded (incremental decoding's start() does it: begin_batch)
  void begin_batch() override { clear(); }
  void record(nn::AttentionSite site, int layer, const nn::AttentionShape& s, const float* probs) override;
  void begin_step(int position) override { step_ = position; }

  // Incremental decoding (IncrementalDecoder with this tap): the matrices of the hypothesis whose
  // query at step t was row step_rows[t] (in step t's numbering of rows); `sentence` is its index
  // in the batch given to start() (for encoder self-attention). Cross-attention rows and encoder
  // rows are cropped to source_length keys; decoder self-attention rows fill a causal square.
  std::vector<inspect::AttentionMatrix> hypothesis(int sentence, int source_length,
                                                   const std::vector<std::int32_t>& step_rows) const;
  // Forced decoding of a whole padded batch (Transformer::sentence_log_probs with this tap).
  std::vector<inspect::AttentionMatrix> forced(int sentence, int source_length, int target_length) const;

 private:
  struct Tensor {
    nn::AttentionShape shape;
    std::vector<float> data;  // [batch, heads, queries, keys]
    const float* row(int b, int head, int query) const {
      return data.data() + ((static_cast<std::size_t>(b) * shape.heads + head) * shape.queries + query) * shape.keys;
    }
  };
  const Tensor& tensor(nn::AttentionSite site, int layer, int step) const;
  // The selected (site, layer) pairs in the record's order: cross, decoder_self, encoder_self.
  std::vector<std::pair<nn::AttentionSite, int>> kept() const;

  Backend& backend_;
  AttentionSelection selection_;
  int model_heads_;
  int layers_seen_ = 0;
  int step_ = -1;                                        // -1 outside incremental steps (the encoder, forced decoding)
  std::map<std::tuple<int, int, int>, Tensor> tensors_;  // by (site, layer, step)
};

inspect::AttentionKind attention_kind(nn::AttentionSite site);

// Word alignment of translations (`attn translate --alignment`, the service's "alignment"):
// resolves the layer (-1: inspect::default_alignment_layer) and the head ("mean" or a number)
// against the model, and checks that `selection` exports what the alignment reads. Errors name
// the layer or head and the model's range.
inspect::AlignmentOptions resolve_alignment(const ModelConfig& config, const AttentionSelection& selection, int layer,
                                            const std::string& head, double threshold);

}  // namespace attn

namespace attn::data {
class Vocabulary;
}

namespace attn {

// The record of one sentence (inspect/attention_record.h): pieces of the ids plus "</s>".
inspect::AttentionRecord make_attention_record(const data::Vocabulary& vocabulary, std::int64_t line,
                                               std::string source, std::string target,
                                               const std::vector<std::int32_t>& source_ids,
                                               const std::vector<std::int32_t>& target_ids, double log_prob,
                                               double score, std::vector<inspect::AttentionMatrix> attention);

}  // namespace attn
