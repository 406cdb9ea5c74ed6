#pragma once
// attn's own API (/v1/translate, /v1/score) without HTTP or models: a request's body checked
// against the models served and the limits, into what the queue is asked. Errors are ApiError:
// 400 for what the request got wrong, 404 for a model that is not served.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decode/attention_export.h"
#include "model/model_config.h"
#include "serve/serve_options.h"
#include "serve/translation_queue.h"

namespace attn::serve {

// The model a request names: "model" (an id), or "source" and "target"; nothing names the only
// model served. Returns its index in `specs`.
int model_for(const nlohmann::json& request, const std::vector<ModelSpec>& specs);

// "attention": true (what AttentionSelection holds by default), or {kinds, layers, heads}, each an
// array or a comma-separated string (as the command line takes), checked against the model.
AttentionSelection attention_selection(const nlohmann::json& value, const ModelConfig& config);

struct TranslateRequest {
  int model = 0;  // index into the specs served
  std::vector<std::string> texts;
  JobOptions job;
  bool want_attention = false;  // the reply carries the attention of each text
  bool want_alignment = false;  // the reply carries word alignments, made as `alignment` says
  inspect::AlignmentOptions alignment;
  // "lines" (each text one sentence, the default), or a document format each text is read in and
  // translated sentence by sentence: "text" (paragraphs), "html", "markdown".
  std::string format = "lines";
};

// A /v1/translate body; configs[i] is the configuration of specs[i]'s model.
TranslateRequest read_translate_request(const nlohmann::json& request, const std::vector<ModelSpec>& specs,
                                        const std::vector<ModelConfig>& configs, const Limits& limits);

struct ScoreRequest {
  int model = 0;  // index into the specs served
  std::vector<std::string> sources, targets;
  bool want_attention = false;
  AttentionSelection attention;
};

// A /v1/score body; configs[i] is the configuration of specs[i]'s model.
ScoreRequest read_score_request(const nlohmann::json& request, const std::vector<ModelSpec>& specs,
                                const std::vector<ModelConfig>& configs, const Limits& limits);

}  // namespace attn::serve
