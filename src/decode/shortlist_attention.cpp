#include "decode/shortlist_attention.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"
#include "decode/attention_export.h"
#include "decode/forced_decoding.h"

namespace attn {

AttentionLinkCounts::AttentionLinkCounts(std::int32_t vocabulary_size)
    : counts_(static_cast<std::size_t>(std::max<std::int32_t>(vocabulary_size, 0))) {}

void AttentionLinkCounts::add(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                              const inspect::AttentionMatrix& attention) {
  if (attention.rows != static_cast<int>(target.size()) + 1 || attention.cols != static_cast<int>(source.size()) + 1 ||
      attention.weights.size() != static_cast<std::size_t>(attention.rows) * static_cast<std::size_t>(attention.cols))
    throw Error("shortlist: a cross-attention of " + std::to_string(attention.rows) + " x " +
                std::to_string(attention.cols) + " for a pair of " + std::to_string(source.size()) + " and " +
                std::to_string(target.size()) + " pieces (expected one more row and column each, for EOS)");
  const auto size = static_cast<std::int32_t>(counts_.size());
  const auto inside = [size](std::int32_t id) { return id >= 0 && id < size; };
  if (!std::all_of(source.begin(), source.end(), inside) || !std::all_of(target.begin(), target.end(), inside))
    throw Error("shortlist: a piece id outside the vocabulary of " + std::to_string(size));
  // A model whose attention is not finite has diverged: its counts would be a table of nothing.
  if (!std::all_of(attention.weights.begin(), attention.weights.end(), [](float w) { return std::isfinite(w); }))
    throw Error("shortlist: the model's cross-attention is not finite (NaN or infinity): has its training diverged?");
  for (std::size_t j = 0; j < target.size(); ++j)
    for (std::size_t i = 0; i < source.size(); ++i) {
      const float w = attention.at(static_cast<int>(j), static_cast<int>(i));
      if (w > 0) counts_[static_cast<std::size_t>(source[i])][target[j]] += w;
    }
}

double AttentionLinkCounts::count(std::int32_t source, std::int32_t target) const {
  if (source < 0 || static_cast<std::size_t>(source) >= counts_.size()) return 0;
  const auto& row = counts_[static_cast<std::size_t>(source)];
  const auto it = row.find(target);
  return it == row.end() ? 0 : it->second;
}

LexicalTable AttentionLinkCounts::probabilities() const {
  LexicalTable table(counts_.size());
  for (std::size_t s = 0; s < counts_.size(); ++s) {
    double total = 0;
    for (const auto& [t, c] : counts_[s]) total += c;
    if (!(total > 0)) continue;
    table[s].reserve(counts_[s].size());
    for (const auto& [t, c] : counts_[s]) {
      const auto p = static_cast<float>(std::min(1.0, c / total));
      if (p > 0) table[s].push_back({t, p});
    }
  }
  return table;
}

LexicalTable attention_lexical_table(Transformer& model, const std::vector<std::vector<std::int32_t>>& source,
                                     const std::vector<std::vector<std::int32_t>>& target, int layer,
                                     int batch_sentences) {
  if (source.size() != target.size())
    throw Error("shortlist: " + std::to_string(source.size()) + " source lines but " + std::to_string(target.size()) +
                " target lines");
  if (batch_sentences < 1) throw Error("shortlist: batch_sentences must be at least 1");
  const int layers = model.config().decoder_layers;
  if (layer < 0 || layer >= layers)
    throw Error("shortlist: layer " + std::to_string(layer) + " is not a decoder layer of the model (0-" +
                std::to_string(layers - 1) + ")");
  const std::size_t limit = static_cast<std::size_t>(model.config().max_positions - 1);
  for (std::size_t i = 0; i < source.size(); ++i)
    if (source[i].size() > limit || target[i].size() > limit)
      throw Error("shortlist: pair " + std::to_string(i + 1) + " is longer than the model's " + std::to_string(limit) +
                  " tokens");
  // Pairs of similar lengths batched together pad least; the sums do not depend on the order but
  // in their last bits.
  std::vector<std::size_t> order(source.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(source[a].size(), target[a].size()) < std::pair(source[b].size(), target[b].size());
  });
  AttentionSelection selection;
  selection.layers = {layer};
  AttentionLinkCounts counts(model.config().vocab_size);
  const std::size_t chunk = static_cast<std::size_t>(batch_sentences);  // pairs whose attention is held at once
  std::vector<std::vector<std::int32_t>> src, tgt;
  for (std::size_t start = 0; start < order.size(); start += chunk) {
    const std::size_t end = std::min(order.size(), start + chunk);
    src.clear();
    tgt.clear();
    for (std::size_t n = start; n < end; ++n) {
      src.push_back(source[order[n]]);
      tgt.push_back(target[order[n]]);
    }
    const auto decoded = force_decode(model, src, tgt, batch_sentences, &selection);
    for (std::size_t n = 0; n < decoded.size(); ++n) {
      std::vector<const inspect::AttentionMatrix*> heads;
      for (const auto& m : decoded[n].attention) heads.push_back(&m);
      counts.add(src[n], tgt[n], inspect::mean_of_heads(heads, "shortlist: the cross-attention heads"));
    }
  }
  return counts.probabilities();
}

Shortlist build_attention_shortlist(const LoadedModel& model, const std::filesystem::path& source,
                                    const std::filesystem::path& target, ShortlistOptions options, int batch_sentences,
                                    std::size_t* skipped) {
  check_shortlist_options(options);
  Transformer& transformer = *model.model;
  const int layers = transformer.config().decoder_layers;
  if (options.attention_layer < 0) options.attention_layer = layers - 1;
  if (options.attention_layer >= layers)  // before the text is read
    throw Error("--layer " + std::to_string(options.attention_layer) + ": the model's decoder layers are 0-" +
                std::to_string(layers - 1));
  options.method = ShortlistMethod::attention;
  const TokenisedPairs pairs = read_parallel_text(*model.vocabulary, source, target);
  const std::size_t limit = static_cast<std::size_t>(transformer.config().max_positions - 1);
  std::vector<std::vector<std::int32_t>> src, tgt;
  for (std::size_t i = 0; i < pairs.source.size(); ++i)
    if (pairs.source[i].size() <= limit && pairs.target[i].size() <= limit) {
      src.push_back(pairs.source[i]);
      tgt.push_back(pairs.target[i]);
    }
  if (skipped) *skipped = pairs.source.size() - src.size();
  if (src.empty()) throw Error(source.string() + " / " + target.string() + ": no pair within the model's length");
  return Shortlist::from_table(*model.vocabulary, pairs.target,
                               attention_lexical_table(transformer, src, tgt, options.attention_layer, batch_sentences),
                               options);
}

}  // namespace attn
