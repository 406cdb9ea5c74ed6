#pragma once
// A shortlist's lexical table from the model's own cross-attention instead of IBM Model 1: every
// training pair is forced-decoded, and the attention each target piece pays to the source pieces
// (one decoder layer, the mean of its heads) is counted as fractional links between them — the
// E-step counts of IBM Model 1 with the model's attention as the alignment posterior.
#include <cstdint>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include "decode/model_directory.h"
#include "decode/shortlist.h"
#include "inspect/attention_record.h"

namespace attn {

class AttentionLinkCounts {
 public:
  explicit AttentionLinkCounts(std::int32_t vocabulary_size);

  // One pair (ids without EOS): `attention` is its cross-attention as forced decoding gives it,
  // target.size() + 1 rows (the pieces, then EOS) × source.size() + 1 columns (the pieces, then
  // EOS). Target piece j adds attention(j, i) to c(source[i], target[j]) for every source piece
  // i; the EOS row and column are not counted (EOS is always in a shortlist, and attention parked
  // on the source's EOS links to no piece). Throws Error on another shape or an id outside the
  // vocabulary.
  void add(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
           const inspect::AttentionMatrix& attention);

  // t(target | source) = c(source, target) / Σ_t' c(source, t'), for the pairs with c > 0; a
  // source id without counts has no entries.
  LexicalTable probabilities() const;

  double count(std::int32_t source, std::int32_t target) const;

 private:
  std::vector<std::unordered_map<std::int32_t, double>> counts_;  // per source id
};

// The table from pairs of ids (without EOS, each within the model's positions): forced-decoded
// `batch_sentences` at a time, `layer`'s cross-attention averaged over its heads and counted.
LexicalTable attention_lexical_table(Transformer& model, const std::vector<std::vector<std::int32_t>>& source,
                                     const std::vector<std::vector<std::int32_t>>& target, int layer,
                                     int batch_sentences);

// `attn shortlist build --method attention`: the pairs of two parallel text files (as
// read_parallel_text reads them; pairs longer than the model's positions are skipped and counted
// in `skipped`) forced-decoded `batch_sentences` at a time, options.attention_layer's
// cross-attention (-1: the last layer) averaged over the heads and counted, the frequent pieces
// taken from the target side. The returned options hold the layer read.
Shortlist build_attention_shortlist(const LoadedModel& model, const std::filesystem::path& source,
                                    const std::filesystem::path& target, ShortlistOptions options, int batch_sentences,
                                    std::size_t* skipped = nullptr);

}  // namespace attn
