#include "document/model_sentences.h"

#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "decode/forced_decoding.h"
#include "inspect/attention_record.h"

namespace attn::document {

ModelSentences::ModelSentences(const LoadedModel& model, BatchTranslatorOptions options)
    : model_(model), options_(std::move(options)), plain_(*model.model, *model.vocabulary, [&] {
        BatchTranslatorOptions o = options_;
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

std::vector<SentenceTranslation> ModelSentences::operator()(const std::vector<std::string>& sentences,
                                                            const std::vector<bool>& alignment) {
  std::vector<BatchTranslation> got = plain_.translate(sentences);
  const BatchStatistics& s = plain_.statistics();
  totals_.sentences += s.sentences, totals_.source_tokens += s.source_tokens;
  totals_.target_tokens += s.target_tokens, totals_.seconds += s.seconds;
  totals_.batches += s.batches, totals_.output_rows += s.output_rows;
  std::vector<SentenceTranslation> out(sentences.size());
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    out[i].text = got[i].text;
    out[i].cropped = got[i].cropped;
  }
  // The alignment of each best translation, from the cross-attention of the model reading it again
  // (forced decoding): the same weights the search computed for it, at a fraction of what keeping
  // every beam's attention through the search would cost.
  std::vector<std::size_t> which;
  std::vector<std::vector<std::int32_t>> sources, targets;
  for (std::size_t i = 0; i < sentences.size(); ++i)
    if (alignment[i] && !got[i].n_best.empty()) {
      which.push_back(i);
      sources.push_back(got[i].source_ids);
      targets.push_back(got[i].n_best.front().tokens);
    }
  if (which.empty()) return out;
  std::vector<ForcedDecoding> forced = force_decode(*model_.model, sources, targets, 32, &options_.attention,
                                                    /*scores=*/false);
  for (std::size_t k = 0; k < which.size(); ++k) {
    const std::size_t i = which[k];
    const inspect::AttentionRecord record =
        forced_decoding_record(*model_.vocabulary, static_cast<std::int64_t>(i) + 1, sentences[i], out[i].text,
                               sources[k], targets[k], std::move(forced[k]));
    for (const inspect::Link& link : inspect::align_record(record, align_))
      out[i].links.push_back({link.source, link.target});
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
