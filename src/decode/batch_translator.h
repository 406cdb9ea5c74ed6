#pragma once
// The batch translator, the engine under every face (docs/translation-path.md names the parts):
// text to text: tokenise, sort by length into batches, beam search, detokenise, and return the
// translations in input order. Empty lines translate to empty lines; inputs longer than the
// model accepts are cropped (and reported), never crashed on.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/vocabulary.h"
#include "decode/attention_export.h"
#include "decode/beam_search.h"
#include "decode/incremental_decoder.h"
#include "decode/search_options.h"
#include "decode/shortlist.h"
#include "model/transformer.h"

namespace attn {

struct BatchTranslatorOptions {
  SearchOptions search;
  int batch_tokens = 2048;  // source tokens per batch, padding included
  int max_batch_sentences = 64;
  int max_input_tokens = 0;       // longer inputs are cropped; 0 = the model's max_positions - 1
  bool export_attention = false;  // fill Translation::attention for the best hypothesis
  AttentionSelection attention;   // which attentions (default: every layer and head of cross)
  // A lexical shortlist (decode/shortlist.h): each batch is decoded over the union of its
  // sources' first shortlist_k candidates, the frequent pieces and the special tokens; scores and
  // n-best lists are over those pieces. Null: the whole vocabulary.
  std::shared_ptr<const Shortlist> shortlist;
  int shortlist_k = kDefaultShortlistK;
};

struct BatchTranslation {
  std::string text;                      // the best hypothesis
  std::vector<std::string> n_best_text;  // up to n_best hypotheses, best first
  std::vector<Hypothesis> n_best;        // their tokens and scores
  int source_tokens = 0;
  bool cropped = false;                  // the input was longer than max_input_tokens
  std::vector<std::int32_t> source_ids;  // as decoded (cropped), without EOS
  // With BatchTranslatorOptions::export_attention: the best hypothesis' attention matrices, queries
  // and keys including EOS (see inspect/attention_record.h).
  std::vector<inspect::AttentionMatrix> attention;
};

struct BatchStatistics {
  std::int64_t sentences = 0, source_tokens = 0, target_tokens = 0;  // target tokens include EOS
  double seconds = 0;
  std::int64_t batches = 0, output_rows = 0;  // batches decoded, and the sum of their output layers' rows
};

class BatchTranslator {
 public:
  BatchTranslator(const Transformer& model, const data::Vocabulary& vocabulary, BatchTranslatorOptions options = {});

  std::vector<BatchTranslation> translate(const std::vector<std::string>& lines);
  // Token-level entry point (ids without EOS), same batching. With export_attention and a
  // non-null `attention`, (*attention)[i] receives the best hypothesis' matrices of source i.
  std::vector<std::vector<Hypothesis>> translate_ids(
      const std::vector<std::vector<std::int32_t>>& sources,
      std::vector<std::vector<inspect::AttentionMatrix>>* attention = nullptr);

  const BatchStatistics& statistics() const { return stats_; }  // of the last call
  const BatchTranslatorOptions& options() const { return options_; }

 private:
  const Transformer& model_;
  const data::Vocabulary& vocabulary_;
  BatchTranslatorOptions options_;
  IncrementalDecoder decoder_;
  std::unique_ptr<AttentionRecorder> recorder_;
  BatchStatistics stats_;
};

}  // namespace attn
