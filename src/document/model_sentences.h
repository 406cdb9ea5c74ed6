#pragma once
// A loaded model as the SentenceTranslator of documents: the batch translator of attn translate,
// and for sentences with markup to place the word alignment of each translation, read off the
// cross-attention of the alignment layer that the search computed for it.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "decode/model_directory.h"
#include "decode/batch_translator.h"
#include "document/document_translation.h"
#include "inspect/word_alignment.h"

namespace attn::document {

class ModelSentences {
 public:
  // `options` as attn translate's (n_best is taken as 1); the alignment reads the default layer's
  // mean of heads (docs/alignment.md).
  ModelSentences(const LoadedModel& model, BatchTranslatorOptions options);
  ~ModelSentences();

  std::vector<SentenceTranslation> operator()(const std::vector<std::string>& sentences,
                                              const std::vector<bool>& alignment);
  // Tokens of a text as the model reads it, and the most it reads (longer inputs are cropped).
  int count_tokens(std::string_view text) const;
  int max_input_tokens() const;
  // The longest sentence a document hands this model whole (document_sentence_tokens).
  int sentence_tokens() const;
  // Totals of every call so far.
  const BatchStatistics& statistics() const { return totals_; }

 private:
  const LoadedModel& model_;
  BatchTranslator plain_;    // no attention kept
  BatchTranslator aligned_;  // the alignment layer's cross-attention kept for the output
  inspect::AlignmentOptions align_;
  int max_input_tokens_;
  BatchStatistics totals_;
};

// The longest sentence, in tokens, a document hands the model whole, on every face: `requested` where
// given (> 0: attn translate --max-input-tokens), else the source length 4 in 5 of the model's
// training sentences do not exceed (config.json's sentence_tokens: units much longer than those it
// learnt on translate worse, docs/documents.md), else the most the model reads (max_positions - 1).
// A longer sentence is cut at a clause boundary and translated in pieces.
int document_sentence_tokens(const ModelConfig& config, int requested);

// What documents' word alignment reads, on every face (attn translate, the APIs, the service): the
// default alignment layer's cross-attention, every head (their mean; docs/alignment.md).
AttentionSelection alignment_selection(const ModelConfig& config);
inspect::AlignmentOptions alignment_options(const ModelConfig& config);
// The (source word, target word) links of a translation's best hypothesis (n_best: best first),
// from the attention the search exported for it with alignment_selection.
std::vector<std::pair<int, int>> translation_links(const data::Vocabulary& vocabulary, const std::string& source,
                                                   const std::string& target,
                                                   const std::vector<std::int32_t>& source_ids,
                                                   const std::vector<Hypothesis>& n_best,
                                                   std::vector<inspect::AttentionMatrix> attention,
                                                   const inspect::AlignmentOptions& align);

// The DocumentOptions that go with a model: its source language's sentence rules (unless
// `language` names one), sentences cut at its input limit.
DocumentOptions document_options(const ModelSentences& sentences, const LoadedModel& model,
                                 const std::string& language);

}  // namespace attn::document
