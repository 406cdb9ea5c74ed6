#include "serve/document_sentences.h"

#include <algorithm>

#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "inspect/word_alignment.h"
#include "serve/encoded_texts.h"

namespace attn::serve {

document::SentenceTranslator queue_sentences(TranslationQueue& queue, int model, const ServedModel& served,
                                             const JobOptions& job, Clock::time_point deadline) {
  return [&queue, model, &served, job, deadline](const std::vector<std::string>& sentences,
                                                 const std::vector<bool>& alignment) {
    JobOptions options = job;
    options.search.n_best = 1;
    // Sentences with markup to place need their translation's word alignment: the search keeps the
    // cross-attention of the alignment layer for the hypothesis it outputs (the same translations
    // as without it), and the links are read off that.
    const bool aligned = std::find(alignment.begin(), alignment.end(), true) != alignment.end();
    const ModelConfig& config = served.loaded.model->config();
    AttentionSelection cross;
    cross.layers = {inspect::default_alignment_layer(config.decoder_layers)};
    options.export_attention = aligned;
    options.attention = aligned ? cross : AttentionSelection{};
    const EncodedTexts sources = encode_texts(served.loaded, sentences, /*crop=*/true);
    auto results = queue.translate(model, options, sources.ids, deadline);
    const data::Vocabulary& vocabulary = *served.loaded.vocabulary;
    std::vector<document::SentenceTranslation> out(sentences.size());
    const inspect::AlignmentOptions align =
        aligned ? resolve_alignment(config, cross, -1, "mean", 0) : inspect::AlignmentOptions{};
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      out[i].cropped = sources.cropped[i];
      if (results[i].n_best.empty()) continue;
      out[i].text = vocabulary.decode_line(results[i].n_best.front().tokens);
      if (!alignment[i]) continue;
      const inspect::AttentionRecord record =
          translation_record(vocabulary, static_cast<std::int64_t>(i) + 1, sentences[i], out[i].text, sources.ids[i],
                             results[i].n_best, std::move(results[i].attention));
      for (const inspect::Link& link : inspect::align_record(record, align))
        out[i].links.push_back({link.source, link.target});
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
