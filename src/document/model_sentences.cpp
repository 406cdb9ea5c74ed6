#include "document/model_sentences.h"

#include <algorithm>

#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "inspect/attention_record.h"

namespace attn::document {

AttentionSelection alignment_selection(const ModelConfig& config) {
  AttentionSelection cross;
  cross.layers = {inspect::default_alignment_layer(config.decoder_layers)};
  return cross;
}

inspect::AlignmentOptions alignment_options(const ModelConfig& config) {
  return resolve_alignment(config, alignment_selection(config), -1, "mean", 0);
}

std::vector<std::pair<int, int>> translation_links(const data::Vocabulary& vocabulary, const std::string& source,
                                                   const std::string& target,
                                                   const std::vector<std::int32_t>& source_ids,
                                                   const std::vector<Hypothesis>& n_best,
                                                   std::vector<inspect::AttentionMatrix> attention,
                                                   const inspect::AlignmentOptions& align) {
  const inspect::AttentionRecord record =
      translation_record(vocabulary, 1, source, target, source_ids, n_best, std::move(attention));
  std::vector<std::pair<int, int>> links;
  for (const inspect::Link& link : inspect::align_record(record, align)) links.emplace_back(link.source, link.target);
  return links;
}

namespace {

BatchTranslatorOptions with_attention(BatchTranslatorOptions o, const ModelConfig& config, bool exported) {
  o.search.n_best = 1;
  o.export_attention = exported;
  if (exported) o.attention = alignment_selection(config);
  return o;
}

}  // namespace

ModelSentences::ModelSentences(const LoadedModel& model, BatchTranslatorOptions options)
    : model_(model),
      plain_(*model.model, *model.vocabulary, with_attention(options, model.model->config(), false)),
      aligned_(*model.model, *model.vocabulary, with_attention(options, model.model->config(), true)),
      align_(alignment_options(model.model->config())),
      max_input_tokens_(options.max_input_tokens) {}

ModelSentences::~ModelSentences() = default;

int ModelSentences::count_tokens(std::string_view text) const {
  return static_cast<int>(model_.vocabulary->encode(std::string(text)).size());
}

int ModelSentences::max_input_tokens() const {
  return max_input_tokens_ > 0 ? max_input_tokens_ : model_.model->config().max_positions - 1;
}

int ModelSentences::sentence_tokens() const {
  return document_sentence_tokens(model_.model->config(), max_input_tokens_);
}

int document_sentence_tokens(const ModelConfig& config, int requested) {
  if (requested > 0) return std::min(requested, config.max_positions - 1);
  return config.sentence_tokens > 0 ? config.sentence_tokens : config.max_positions - 1;
}

std::vector<SentenceTranslation> ModelSentences::operator()(const std::vector<std::string>& sentences,
                                                            const std::vector<bool>& alignment) {
  // Sentences with markup to place need their translation's word alignment: the search then keeps
  // the cross-attention of the alignment layer for the hypothesis it outputs (one [rows, heads,
  // keys] copy a step), and the same sentences, in the same batches, give the same translations
  // with it as without it.
  const bool aligned = std::find(alignment.begin(), alignment.end(), true) != alignment.end();
  BatchTranslator& translator = aligned ? aligned_ : plain_;
  std::vector<BatchTranslation> got = translator.translate(sentences);
  const BatchStatistics& s = translator.statistics();
  totals_.sentences += s.sentences, totals_.source_tokens += s.source_tokens;
  totals_.target_tokens += s.target_tokens, totals_.seconds += s.seconds;
  totals_.batches += s.batches, totals_.output_rows += s.output_rows;
  std::vector<SentenceTranslation> out(sentences.size());
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    out[i].text = got[i].text;
    out[i].cropped = got[i].cropped;
    if (!alignment[i] || got[i].n_best.empty()) continue;
    out[i].links = translation_links(*model_.vocabulary, sentences[i], out[i].text, got[i].source_ids, got[i].n_best,
                                     std::move(got[i].attention), align_);
  }
  return out;
}

DocumentOptions document_options(const ModelSentences& sentences, const LoadedModel& model,
                                 const std::string& language) {
  DocumentOptions o;
  o.language = language.empty() ? model.languages.source : language;
  o.max_sentence_tokens = sentences.sentence_tokens();
  o.count_tokens = [&sentences](std::string_view text) { return sentences.count_tokens(text); };
  return o;
}

}  // namespace attn::document
