#include "serve/v1_request.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"
#include "decode/search_options.h"
#include "serve/api_error.h"
#include "serve/request_fields.h"

namespace attn::serve {

using nlohmann::json;

namespace {

// "kinds"/"layers"/"heads" as an array or a comma-separated string (as the command line takes).
std::string list_text(const json& value, const char* key) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array())
    invalid_request(std::string("attention.") + key + " must be an array or a comma-separated string");
  std::string text;
  for (const auto& v : value) {
    if (!v.is_string() && !v.is_number_integer())
      invalid_request(std::string("attention.") + key + " holds " + quoted(v) + ": give names or numbers");
    if (!text.empty()) text += ',';
    text += v.is_string() ? v.get<std::string>() : v.dump();  // an integer's digits as sent (no wrap past 2^63)
  }
  return text;
}

// False (or absent) asks for nothing; true or an object asks.
bool asked(const json& value) { return !(value.is_boolean() && !value.get<bool>()); }

void check_translate_keys(const json& request) {
  if (!request.is_object()) invalid_request("the body must be a JSON object");
  static const std::vector<std::string> keys{
      "model",        "source",       "target",     "q",         "beam",      "alpha",   "n_best",
      "max_length_a", "max_length_b", "min_length", "attention", "alignment", "api_key", "format"};
  for (const auto& [key, v] : request.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) invalid_request("unknown key \"" + key + "\"");
}

// q: one text or several, each a single line within the limits.
std::vector<std::string> translate_texts(const json& request, const Limits& limits, bool lines) {
  if (!request.contains("q") || request["q"].is_null()) invalid_request("missing q parameter");
  std::vector<std::string> texts = texts_of(request["q"]);
  check_text_limits(texts, limits);
  for (std::size_t i = 0; lines && i < texts.size(); ++i)
    if (texts[i].find('\n') != std::string::npos)
      invalid_request("text " + std::to_string(i + 1) +
                      " has several lines: send each line as a text of its own, or give a format (text, html, "
                      "markdown)");
  return texts;
}

// The search's options: each field of its type here, then the one rule of every face
// (decode/search_options.h); what the request leaves out keeps its default.
SearchOptions search_options(const json& request) {
  SearchOptions s;
  s.beam_size = integer_field(request, "beam", s.beam_size);
  s.length_penalty = float_field(request, "alpha", s.length_penalty);
  s.n_best = integer_field(request, "n_best", s.n_best);
  s.max_length_a = float_field(request, "max_length_a", s.max_length_a);
  s.max_length_b = integer_field(request, "max_length_b", s.max_length_b);
  s.min_length = integer_field(request, "min_length", s.min_length);
  if (const auto problem = check(s)) invalid_request(problem->message);
  return s;
}

// "alignment": true, or {layer, head, threshold}, resolved against the model and the attention
// that `selection` exports.
inspect::AlignmentOptions alignment_options(const json& alignment, const ModelConfig& config,
                                            const AttentionSelection& selection) {
  int layer = -1;
  std::string head = "mean";
  double threshold = 0;
  if (alignment.is_object()) {
    for (const auto& [key, v] : alignment.items())
      if (key != "layer" && key != "head" && key != "threshold")
        invalid_request("alignment has no key \"" + key + "\" (it takes layer, head, threshold)");
    layer = integer_field(alignment, "layer", -1, 0, 1 << 20);
    if (alignment.contains("head")) {
      const json& h = alignment["head"];
      if (h.is_number_integer())
        head = h.dump();  // its digits as sent: a head number past 2^63 is refused as itself
      else if (h.is_string())
        head = h.get<std::string>();
      else
        invalid_request("alignment.head must be a head number or \"mean\"");
    }
    threshold = number_field(alignment, "threshold", 0, 0, 1);
  } else if (!alignment.is_boolean()) {
    invalid_request("alignment must be true, false or an object {layer, head, threshold}");
  }
  try {
    return resolve_alignment(config, selection, layer, head, threshold);
  } catch (const Error& e) {
    invalid_request(std::string("alignment: ") + e.what());
  }
}

// pairs: a non-empty array of {"source": string, "target": string}, each valid UTF-8.
void read_pairs(const json& request, ScoreRequest& r) {
  if (!request.contains("pairs") || !request["pairs"].is_array() || request["pairs"].empty())
    invalid_request("pairs must be a non-empty array of {\"source\": ..., \"target\": ...}");
  for (std::size_t i = 0; i < request["pairs"].size(); ++i) {
    const json& pair = request["pairs"][i];
    const std::string where = "pairs[" + std::to_string(i) + "]";
    if (!pair.is_object() || !pair.contains("source") || !pair.contains("target") || !pair["source"].is_string() ||
        !pair["target"].is_string())
      invalid_request(where + " must be {\"source\": string, \"target\": string}");
    for (const char* side : {"source", "target"})
      if (auto bad = find_invalid_utf8(pair[side].get_ref<const std::string&>()))
        invalid_request(where + "." + side + " is not valid UTF-8 (byte " + std::to_string(*bad + 1) + ")");
    r.sources.push_back(pair["source"].get<std::string>());
    r.targets.push_back(pair["target"].get<std::string>());
  }
}

// At most limits.max_texts pairs, and limits.max_chars characters in all, sources and targets.
void check_pair_limits(const ScoreRequest& r, const Limits& limits) {
  std::vector<std::string> all = r.sources;
  all.insert(all.end(), r.targets.begin(), r.targets.end());
  if (r.sources.size() > static_cast<std::size_t>(limits.max_texts))
    invalid_request("request (" + std::to_string(r.sources.size()) + ") exceeds text limit (" +
                    std::to_string(limits.max_texts) + ")");
  Limits chars = limits;
  chars.max_texts = static_cast<int>(all.size());
  check_text_limits(all, chars);
}

}  // namespace

int model_for(const json& request, const std::vector<ModelSpec>& specs) {
  const std::string* id = string_field(request, "model");
  const std::string* source = string_field(request, "source");
  const std::string* target = string_field(request, "target");
  std::string known;
  for (const ModelSpec& s : specs) known += (known.empty() ? "" : ", ") + s.id();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ModelSpec& s = specs[i];
    if ((id && *id == s.id()) || (!id && source && target && *source == s.source && *target == s.target))
      return static_cast<int>(i);
  }
  if (!id && !source && !target && specs.size() == 1) return 0;
  if (!id && !(source && target)) invalid_request("give model (one of " + known + "), or source and target");
  throw ApiError(404, "No model " + (id ? *id : *source + "-" + *target) + " (this server has " + known + ")");
}

AttentionSelection attention_selection(const json& value, const ModelConfig& config) {
  AttentionSelection s;
  try {
    if (value.is_object()) {
      for (const auto& [key, v] : value.items())
        if (key != "kinds" && key != "layers" && key != "heads")
          invalid_request("attention has no key \"" + key + "\" (it takes kinds, layers, heads)");
      if (value.contains("kinds")) parse_attention_kinds(list_text(value["kinds"], "kinds"), s);
      if (value.contains("layers"))
        s.layers = parse_index_list("attention.layers", list_text(value["layers"], "layers"));
      if (value.contains("heads")) s.heads = parse_index_list("attention.heads", list_text(value["heads"], "heads"));
    } else if (!value.is_boolean()) {
      invalid_request("attention must be true, false or an object {kinds, layers, heads}");
    }
    s.check(config);
  } catch (const Error& e) {
    invalid_request(std::string("attention: ") + e.what());
  }
  return s;
}

TranslateRequest read_translate_request(const json& request, const std::vector<ModelSpec>& specs,
                                        const std::vector<ModelConfig>& configs, const Limits& limits) {
  check_translate_keys(request);
  TranslateRequest r;
  r.model = model_for(request, specs);
  if (const std::string* format = string_field(request, "format")) {
    if (*format != "lines" && *format != "text" && *format != "html" && *format != "markdown")
      invalid_request("format " + quoted(request["format"]) + " is not one of lines, text, html, markdown");
    r.format = *format;
  }
  r.texts = translate_texts(request, limits, r.format == "lines");
  const ModelConfig& config = configs[static_cast<std::size_t>(r.model)];
  r.job.search = search_options(request);
  const json attention = request.value("attention", json(false));
  const json alignment = request.value("alignment", json(false));
  r.want_attention = asked(attention);
  r.want_alignment = asked(alignment);
  if (r.want_attention || r.want_alignment) {
    r.job.export_attention = true;
    r.job.attention = attention_selection(r.want_attention ? attention : json(true), config);
  }
  if (r.want_alignment) r.alignment = alignment_options(alignment, config, r.job.attention);
  if (r.format != "lines" && r.job.search.n_best > 1)
    invalid_request("n_best works one sentence at a time: with format " + r.format + ", n_best must be 1");
  return r;
}

ScoreRequest read_score_request(const json& request, const std::vector<ModelSpec>& specs,
                                const std::vector<ModelConfig>& configs, const Limits& limits) {
  if (!request.is_object()) invalid_request("the body must be a JSON object");
  for (const auto& [key, v] : request.items())
    if (key != "model" && key != "pairs" && key != "attention" && key != "api_key")
      invalid_request("unknown key \"" + key + "\" (score takes model, pairs, attention)");
  json which = json::object();
  if (request.contains("model")) which["model"] = request["model"];
  ScoreRequest r;
  r.model = model_for(which, specs);
  read_pairs(request, r);
  check_pair_limits(r, limits);
  r.want_attention = request.contains("attention") && asked(request["attention"]);
  if (r.want_attention)
    r.attention = attention_selection(request["attention"], configs[static_cast<std::size_t>(r.model)]);
  return r;
}

}  // namespace attn::serve
