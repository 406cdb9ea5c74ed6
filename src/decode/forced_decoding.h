#pragma once
// Forced decoding: the model's log-probability of given translations (and, if asked, the
// attention it pays while reading them), batched sentences at a time — `attn score`, and
// `attn score --attention` / `attn align --model` for given sentence pairs, the way the paper's
// attention figures were made from fixed sentences.
#include <cstdint>
#include <vector>

#include "decode/attention_export.h"
#include "model/transformer.h"

namespace attn {

struct ForcedDecoding {
  double log_prob = 0;                              // log P(target + EOS | source)
  int target_tokens = 0;                            // EOS included
  std::vector<inspect::AttentionMatrix> attention;  // with a selection: queries target + EOS, keys source + EOS
};

// sources, targets: ids without EOS, each at most the model's max_positions - 1 (callers check and
// name the file and line). batch_sentences > 0.
// scores false: the attention alone (log_prob stays 0), without the output layer.
std::vector<ForcedDecoding> force_decode(Transformer& model, const std::vector<std::vector<std::int32_t>>& sources,
                                         const std::vector<std::vector<std::int32_t>>& targets, int batch_sentences,
                                         const AttentionSelection* attention = nullptr, bool scores = true);

}  // namespace attn
