#include "serve/document_sentences.h"

#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "inspect/word_alignment.h"
#include "serve/encoded_texts.h"

namespace attn::serve {

document::SentenceTranslator queue_sentences(TranslationQueue& queue, int model, const ServedModel& served,
                                             const JobOptions& job, Clock::time_point deadline) {
  return [&queue, model, &served, job, deadline](const std::vector<std::string>& sentences, bool alignment) {
    const ModelConfig& config = served.loaded.model->config();
    JobOptions options = job;
    options.search.n_best = 1;
    inspect::AlignmentOptions align;
    if (alignment) {
      options.export_attention = true;
      options.attention = AttentionSelection{};
      options.attention.layers = {inspect::default_alignment_layer(config.decoder_layers)};
      align = resolve_alignment(config, options.attention, -1, "mean", 0);
    } else {
      options.export_attention = false;
    }
    const EncodedTexts sources = encode_texts(served.loaded, sentences, /*crop=*/true);
    auto results = queue.translate(model, options, sources.ids, deadline);
    const data::Vocabulary& vocabulary = *served.loaded.vocabulary;
    std::vector<document::SentenceTranslation> out(sentences.size());
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      SentenceResult& r = results[i];
      out[i].cropped = sources.cropped[i];
      if (r.n_best.empty()) continue;
      out[i].text = vocabulary.decode_line(r.n_best.front().tokens);
      if (alignment) {
        const inspect::AttentionRecord record =
            translation_record(vocabulary, static_cast<std::int64_t>(i) + 1, sentences[i], out[i].text, sources.ids[i],
                               r.n_best, std::move(r.attention));
        for (const inspect::Link& link : inspect::align_record(record, align))
          out[i].links.push_back({link.source, link.target});
      }
    }
    return out;
  };
}

document::DocumentOptions served_document_options(const ServedModel& served, const std::string& language) {
  document::DocumentOptions o;
  o.language = language.empty() ? served.spec.source : language;
  o.max_sentence_tokens = served.loaded.model->config().max_positions - 1;
  const data::Vocabulary* vocabulary = served.loaded.vocabulary.get();
  o.count_tokens = [vocabulary](std::string_view text) { return static_cast<int>(vocabulary->encode(text).size()); };
  return o;
}

}  // namespace attn::serve
