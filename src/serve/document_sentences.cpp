#include "serve/document_sentences.h"

#include <algorithm>

#include "document/model_sentences.h"
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
    options.export_attention = aligned;
    options.attention = aligned ? document::alignment_selection(config) : AttentionSelection{};
    const EncodedTexts sources = encode_texts(served.loaded, sentences, /*crop=*/true);
    auto results = queue.translate(model, options, sources.ids, deadline);
    const data::Vocabulary& vocabulary = *served.loaded.vocabulary;
    std::vector<document::SentenceTranslation> out(sentences.size());
    const inspect::AlignmentOptions align = aligned ? document::alignment_options(config) : inspect::AlignmentOptions{};
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      out[i].cropped = sources.cropped[i];
      if (results[i].n_best.empty()) continue;
      out[i].text = vocabulary.decode_line(results[i].n_best.front().tokens);
      if (!alignment[i]) continue;
      out[i].links = document::translation_links(vocabulary, sentences[i], out[i].text, sources.ids[i],
                                                 results[i].n_best, std::move(results[i].attention), align);
    }
    return out;
  };
}

document::DocumentOptions served_document_options(const ServedModel& served, const std::string& language) {
  document::DocumentOptions o;
  o.language = language.empty() ? served.spec.source : language;
  o.max_sentence_tokens = document::document_sentence_tokens(served.loaded.model->config(), 0);
  const data::Vocabulary* vocabulary = served.loaded.vocabulary.get();
  o.count_tokens = [vocabulary](std::string_view text) { return static_cast<int>(vocabulary->encode(text).size()); };
  return o;
}

}  // namespace attn::serve
