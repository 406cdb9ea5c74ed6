#include "serve/v1_reply.h"

#include <algorithm>
#include <cmath>

#include "core/float_decimal.h"
#include "decode/attention_records.h"
#include "decode/search_options.h"
#include "inspect/pharaoh.h"
#include "inspect/word_pieces.h"
#include "serve/api_error.h"

namespace attn::serve {

using nlohmann::json;

namespace {

void check_attention_size(const std::vector<SentenceResult>& results) {
  std::size_t weights = 0;
  for (const SentenceResult& r : results)
    for (const inspect::AttentionMatrix& m : r.attention) weights += m.weights.size();
  if (weights > kMaxAttentionWeights)
    throw ApiError(413, "Request Entity Too Large: the attention asked for holds " + std::to_string(weights) +
                            " weights, more than " + std::to_string(kMaxAttentionWeights) +
                            " a reply may carry; ask for fewer texts, kinds, layers or heads");
}

json hypothesis_json(const data::Vocabulary& vocabulary, const Hypothesis& h) {
  return {{"text", vocabulary.decode_line(h.tokens)}, {"score", h.score}, {"log_prob", h.log_prob}};
}

// Text i's entry of the reply.
json translation_json(const TranslateRequest& request, const data::Vocabulary& vocabulary, const EncodedTexts& sources,
                      std::size_t i, SentenceResult& r) {
  json t;
  json n_best = json::array();
  for (const Hypothesis& h : r.n_best) n_best.push_back(hypothesis_json(vocabulary, h));
  const Hypothesis* best = r.n_best.empty() ? nullptr : &r.n_best.front();
  t["text"] = best ? n_best[0]["text"] : json("");
  t["score"] = best ? best->score : 0.0;
  t["log_prob"] = best ? best->log_prob : 0.0;
  t["source_tokens"] = sources.tokens[i] > 0 ? sources.tokens[i] + 1 : 0;  // with </s>, as target_tokens
  t["target_tokens"] = best ? static_cast<int>(best->tokens.size()) + 1 : 0;
  t["cropped"] = static_cast<bool>(sources.cropped[i]);
  t["n_best"] = std::move(n_best);
  if (request.job.export_attention) {
    const inspect::AttentionRecord record =
        translation_record(vocabulary, static_cast<std::int64_t>(i) + 1, request.texts[i], t["text"].get<std::string>(),
                           sources.ids[i], r.n_best, std::move(r.attention));
    if (request.want_alignment) {
      t["alignment"] = best ? inspect::format_pharaoh(inspect::align_record(record, request.alignment)) : "";
      t["source_words"] = inspect::group_pieces(record.source_pieces).words;
      t["target_words"] = inspect::group_pieces(record.target_pieces).words;
    }
    if (request.want_attention) t["attention"] = json(inspect::to_json(record));
  }
  return t;
}

}  // namespace

json translate_reply(const TranslateRequest& request, const std::string& model_id, const data::Vocabulary& vocabulary,
                     const EncodedTexts& sources, std::vector<SentenceResult> results) {
  if (request.want_attention) check_attention_size(results);
  json translations = json::array();
  for (std::size_t i = 0; i < request.texts.size(); ++i)
    translations.push_back(translation_json(request, vocabulary, sources, i, results[i]));
  json out{{"model", model_id}, {"translations", std::move(translations)}};
  if (request.want_alignment) {
    const inspect::AlignmentOptions& a = request.alignment;
    out["alignment_options"] = {{"layer", a.layer},
                                {"head", a.head == inspect::kMeanOfHeads ? json("mean") : json(a.head)},
                                {"threshold", a.threshold}};
  }
  return out;
}

json score_reply(const ScoreRequest& request, const std::string& model_id, const data::Vocabulary& vocabulary,
                 const EncodedTexts& sources, const EncodedTexts& targets, const std::vector<ForcedDecoding>& results) {
  json scores = json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ForcedDecoding& r = results[i];
    json one{{"log_prob", r.log_prob},
             {"target_tokens", r.target_tokens},
             {"perplexity", std::exp(-r.log_prob / std::max(r.target_tokens, 1))}};
    if (request.want_attention)
      one["attention"] =
          json(inspect::to_json(forced_decoding_record(vocabulary, static_cast<std::int64_t>(i) + 1, request.sources[i],
                                                       request.targets[i], sources.ids[i], targets.ids[i], r)));
    scores.push_back(std::move(one));
  }
  return {{"model", model_id}, {"scores", std::move(scores)}};
}

json models_reply(const std::vector<ModelSpec>& specs, const std::vector<ModelConfig>& configs) {
  // What a /v1 request that leaves the search options out gets (v1_request.cpp reads them into a
  // default SearchOptions): the paper's beam 4, α 0.6, maximum length source + 50.
  const SearchOptions d;
  const json defaults{{"beam", d.beam_size},
                      {"alpha", float_decimal(d.length_penalty)},
                      {"n_best", d.n_best},
                      {"max_length_a", float_decimal(d.max_length_a)},
                      {"max_length_b", d.max_length_b},
                      {"min_length", d.min_length}};
  json list = json::array();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ModelSpec& m = specs[i];
    const ModelConfig& c = configs[i];
    list.push_back({{"id", m.id()},
                    {"source", m.source},
                    {"target", m.target},
                    {"path", m.dir.string()},
                    {"shortlist",
                     !m.shortlist.empty() ? json{{"path", m.shortlist.string()}, {"k", m.shortlist_k}} : json(nullptr)},
                    {"config",
                     {{"d_model", c.d_model},
                      {"d_ff", c.d_ff},
                      {"heads", c.heads},
                      {"d_k", c.d_k},
                      {"d_v", c.d_v},
                      {"encoder_layers", c.encoder_layers},
                      {"decoder_layers", c.decoder_layers},
                      {"vocab_size", c.vocab_size},
                      {"max_positions", c.max_positions}}},
                    {"defaults", defaults}});
  }
  return {{"models", list}};
}

}  // namespace attn::serve
