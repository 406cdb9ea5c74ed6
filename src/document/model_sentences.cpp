#include "document/model_sentences.h"

#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "inspect/attention_record.h"

namespace attn::document {

ModelSentences::ModelSentences(const LoadedModel& model, TranslateOptions options)
    : model_(model), options_(std::move(options)), plain_(*model.model, *model.vocabulary, [&] {
        TranslateOptions o = options_;
        o.search.n_best = 1;
        o.export_attention = false;
        return o;
      }()) {
  options_.search.n_best = 1;
  const ModelConfig& config = model.model->config();
  AttentionSelection cross;
  cross.layers = {inspect::default_alignment_layer(config.decoder_layers)};
  align_ = resolve_alignment(config, cross, -1, "mean", 0);
  options_.attention = cross;
}

ModelSentences::~ModelSentences() = default;

int ModelSentences::count_tokens(std::string_view text) const {
  return static_cast<int>(model_.vocabulary->encode(std::string(text)).size());
}

int ModelSentences::max_input_tokens() const {
  return options_.max_input_tokens > 0 ? options_.max_input_tokens : model_.model->config().max_positions - 1;
}

std::vector<SentenceTranslation> ModelSentences::operator()(const std::vector<std::string>& sentences, bool alignment) {
  BatchTranslator* t = &plain_;
  if (alignment) {
    if (!aligned_) {
      TranslateOptions o = options_;
      o.export_attention = true;
      aligned_ = std::make_unique<BatchTranslator>(*model_.model, *model_.vocabulary, o);
    }
    t = aligned_.get();
  }
  std::vector<BatchTranslation> got = t->translate(sentences);
  const TranslateStatistics& s = t->statistics();
  totals_.sentences += s.sentences, totals_.source_tokens += s.source_tokens;
  totals_.target_tokens += s.target_tokens, totals_.seconds += s.seconds;
  totals_.batches += s.batches, totals_.output_rows += s.output_rows;
  std::vector<SentenceTranslation> out(sentences.size());
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    BatchTranslation& b = got[i];
    out[i].text = b.text;
    out[i].cropped = b.cropped;
    if (alignment && !b.n_best.empty()) {
      const inspect::AttentionRecord record =
          translation_record(*model_.vocabulary, static_cast<std::int64_t>(i) + 1, sentences[i], b.text, b.source_ids,
                             b.n_best, std::move(b.attention));
      for (const inspect::Link& link : inspect::align_record(record, align_))
        out[i].links.push_back({link.source, link.target});
    }
  }
  return out;
}

DocumentOptions document_options(const ModelSentences& sentences, const LoadedModel& model,
                                 const std::string& language) {
  DocumentOptions o;
  o.language = language.empty() ? model.languages.source : language;
  o.max_sentence_tokens = sentences.max_input_tokens();
  o.count_tokens = [&sentences](std::string_view text) { return sentences.count_tokens(text); };
  return o;
}

}  // namespace attn::document
