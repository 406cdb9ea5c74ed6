#pragma once
// attn's own API (/v1/translate, /v1/score, /v1/models) without HTTP: the replies assembled from
// what the queue returned, in the shapes docs/serve.md describes.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/vocabulary.h"
#include "decode/forced_decoding.h"
#include "model/model_config.h"
#include "serve/encoded_texts.h"
#include "serve/translation_queue.h"
#include "serve/v1_request.h"

namespace attn::serve {

// Attention weights a reply may carry (all matrices of all texts; ~10 bytes each as JSON text).
constexpr std::size_t kMaxAttentionWeights = std::size_t{8} << 20;

// /v1/translate's reply to `request` (whose texts were encoded as `sources`) by model `model_id`:
// per text the best translation, its n-best, token counts and, as asked, attention and word
// alignment. Throws ApiError 413 when the attention would exceed kMaxAttentionWeights.
nlohmann::json translate_reply(const TranslateRequest& request, const std::string& model_id,
                               const data::Vocabulary& vocabulary, const EncodedTexts& sources,
                               std::vector<SentenceResult> results);

// /v1/score's reply: per pair the log-probability, target tokens (EOS included) and perplexity,
// and with request.want_attention the attention (sources and targets as encoded).
nlohmann::json score_reply(const ScoreRequest& request, const std::string& model_id, const data::Vocabulary& vocabulary,
                           const EncodedTexts& sources, const EncodedTexts& targets,
                           const std::vector<ForcedDecoding>& results);

// /v1/models: each model's id, languages, folder, shortlist, sizes and search defaults; configs[i]
// is specs[i]'s.
nlohmann::json models_reply(const std::vector<ModelSpec>& specs, const std::vector<ModelConfig>& configs);

}  // namespace attn::serve
