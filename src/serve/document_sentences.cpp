#include "serve/document_sentences.h"

#include <memory>

#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "decode/forced_decoding.h"
#include "inspect/word_alignment.h"
#include "serve/encoded_texts.h"

namespace attn::serve {

document::SentenceTranslator queue_sentences(TranslationQueue& queue, int model, const ServedModel& served,
                                             const JobOptions& job, Clock::time_point deadline) {
  return [&queue, model, &served, job, deadline](const std::vector<std::string>& sentences,
                                                 const std::vector<bool>& alignment) {
    JobOptions options = job;
    options.search.n_best = 1;
    options.export_attention = false;
    const EncodedTexts sources = encode_texts(served.loaded, sentences, /*crop=*/true);
    auto results = queue.translate(model, options, sources.ids, deadline);
    const data::Vocabulary& vocabulary = *served.loaded.vocabulary;
    std::vector<document::SentenceTranslation> out(sentences.size());
    std::vector<std::size_t> which;
    std::vector<std::vector<std::int32_t>> targets;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      out[i].cropped = sources.cropped[i];
      if (results[i].n_best.empty()) continue;
      out[i].text = vocabulary.decode_line(results[i].n_best.front().tokens);
      if (alignment[i]) which.push_back(i), targets.push_back(results[i].n_best.front().tokens);
    }
    if (which.empty()) return out;
    // The alignment of each best translation: the model reads it again (forced decoding, without its
    // output layer), in turn with the queue's batches, and its cross-attention gives the links.
    const ModelConfig& config = served.loaded.model->config();
    AttentionSelection cross;
    cross.layers = {inspect::default_alignment_layer(config.decoder_layers)};
    const inspect::AlignmentOptions align = resolve_alignment(config, cross, -1, "mean", 0);
    struct Work {
      std::vector<std::vector<std::int32_t>> sources, targets;
      AttentionSelection selection;
      std::vector<ForcedDecoding> results;
    };
    auto work = std::make_shared<Work>();
    for (std::size_t i : which) work->sources.push_back(sources.ids[i]);
    work->targets = std::move(targets);
    work->selection = cross;
    queue.run(
        model,
        [work](Transformer& m) {
          work->results = force_decode(m, work->sources, work->targets, 32, &work->selection, /*scores=*/false);
        },
        deadline);
    for (std::size_t k = 0; k < which.size(); ++k) {
      const std::size_t i = which[k];
      const inspect::AttentionRecord record =
          forced_decoding_record(vocabulary, static_cast<std::int64_t>(i) + 1, sentences[i], out[i].text,
                                 work->sources[k], work->targets[k], std::move(work->results[k]));
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
