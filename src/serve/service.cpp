#include "serve/service.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/utf8.h"
#include "decode/forced_decoding.h"
#include "inspect/pharaoh.h"
#include "inspect/word_pieces.h"
#include "serve/api_error.h"

namespace attn::serve {

using nlohmann::json;

namespace {

[[noreturn]] void invalid(const std::string& what) { throw ApiError(400, "Invalid request: " + what); }

// A request's beam (and n-best) is at most this: each hypothesis holds key/value caches.
constexpr int kMaxBeam = 32;
// Attention weights a reply may carry (all matrices of all texts; ~10 bytes each as JSON text).
constexpr std::size_t kMaxAttentionWeights = std::size_t{8} << 20;

// A value of the request as its error messages quote it: at most 60 characters.
std::string quoted(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

// English names of common codes, for /languages and LibreTranslate's messages; other codes name
// themselves.
std::string language_name(const std::string& code) {
  static const std::map<std::string, std::string> names{
      {"ar", "Arabic"},        {"de", "German"},  {"en", "English"},    {"es", "Spanish"},  {"fr", "French"},
      {"he", "Hebrew"},        {"hi", "Hindi"},   {"it", "Italian"},    {"ja", "Japanese"}, {"ko", "Korean"},
      {"nl", "Dutch"},         {"pl", "Polish"},  {"pt", "Portuguese"}, {"ru", "Russian"},  {"tr", "Turkish"},
      {"uk", "Ukrainian"},     {"zh", "Chinese"}, {"la", "Latin"},      {"el", "Greek"},    {"kjv", "English (KJV)"},
      {"web", "English (WEB)"}};
  const auto it = names.find(code);
  return it == names.end() ? code : it->second;
}

// Unicode characters (code points) of valid UTF-8, as LibreTranslate (Python's len) counts them.
std::size_t characters(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

bool empty_value(const json& v) {
  return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) || (v.is_array() && v.empty());
}

// q: a string or an array of strings, each valid UTF-8 (a form's values were not checked yet).
std::vector<std::string> texts_of(const json& q) {
  std::vector<std::string> texts;
  if (q.is_string()) {
    texts.push_back(q.get<std::string>());
  } else if (q.is_array()) {
    for (std::size_t i = 0; i < q.size(); ++i) {
      if (!q[i].is_string()) invalid("q[" + std::to_string(i) + "] is not a string");
      texts.push_back(q[i].get<std::string>());
    }
  } else {
    invalid("q must be a string or an array of strings");
  }
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (auto bad = find_invalid_utf8(texts[i]))
      invalid((q.is_array() ? "q[" + std::to_string(i) + "]" : std::string("q")) + " is not valid UTF-8 (byte " +
              std::to_string(*bad + 1) + ")");
  return texts;
}

void check_text_limits(const std::vector<std::string>& texts, const Limits& limits) {
  if (texts.size() > static_cast<std::size_t>(limits.max_texts))
    invalid("request (" + std::to_string(texts.size()) + ") exceeds text limit (" + std::to_string(limits.max_texts) +
            ")");
  std::size_t chars = 0;
  for (const auto& t : texts) chars += characters(t);
  if (chars > static_cast<std::size_t>(limits.max_chars))
    invalid("request (" + std::to_string(chars) + ") exceeds text limit (" + std::to_string(limits.max_chars) + ")");
}

// Optional numeric fields with their ranges; a wrong type or value names the key.
int integer(const json& request, const char* key, int fallback, int low, int high) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<long long>() < low || it->get<long long>() > high)
    invalid(std::string(key) + " must be an integer from " + std::to_string(low) + " to " + std::to_string(high) +
            " (got " + quoted(*it) + ")");
  return it->get<int>();
}

double number(const json& request, const char* key, double fallback, double low, double high) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < low || it->get<double>() > high)
    invalid(std::string(key) + " must be a number from " + json(low).dump() + " to " + json(high).dump() + " (got " +
            quoted(*it) + ")");
  return it->get<double>();
}

const std::string* string_field(const json& request, const char* key) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return nullptr;
  if (!it->is_string()) invalid(std::string(key) + " must be a string (got " + quoted(*it) + ")");
  return &it->get_ref<const std::string&>();
}

// "kinds"/"layers"/"heads" as an array or a comma-separated string (as the command line takes).
std::string list_text(const json& value, const char* key) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) invalid(std::string("attention.") + key + " must be an array or a comma-separated string");
  std::string text;
  for (const auto& v : value) {
    if (!v.is_string() && !v.is_number_integer())
      invalid(std::string("attention.") + key + " holds " + quoted(v) + ": give names or numbers");
    if (!text.empty()) text += ',';
    text += v.is_string() ? v.get<std::string>() : std::to_string(v.get<long long>());
  }
  return text;
}

AttentionSelection attention_selection(const json& value, const ModelConfig& config) {
  AttentionSelection s;
  try {
    if (value.is_object()) {
      for (const auto& [key, v] : value.items())
        if (key != "kinds" && key != "layers" && key != "heads")
          invalid("attention has no key \"" + key + "\" (it takes kinds, layers, heads)");
      if (value.contains("kinds")) parse_attention_kinds(list_text(value["kinds"], "kinds"), s);
      if (value.contains("layers"))
        s.layers = parse_index_list("attention.layers", list_text(value["layers"], "layers"));
      if (value.contains("heads")) s.heads = parse_index_list("attention.heads", list_text(value["heads"], "heads"));
    } else if (!value.is_boolean()) {
      invalid("attention must be true, false or an object {kinds, layers, heads}");
    }
    s.check(config);
  } catch (const Error& e) {
    invalid(std::string("attention: ") + e.what());
  }
  return s;
}

json hypothesis_json(const data::Vocabulary& vocabulary, const Hypothesis& h) {
  return {{"text", vocabulary.decode(h.tokens)}, {"score", h.score}, {"log_prob", h.log_prob}};
}

}  // namespace

struct Service::Sentences {
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<int> tokens;  // before cropping
  std::vector<bool> cropped;
};

Service::Service(const ServeOptions& options) : options_(options) {
  if (options_.models.empty()) throw Error("attn serve needs at least one --model SRC-TGT=DIR");
  for (std::size_t i = 0; i < options_.models.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (options_.models[i].id() == options_.models[j].id())
        throw Error("--model " + options_.models[i].id() + " is given twice");
  queue_ = std::make_unique<TranslationQueue>(models_, options_.models, options_.batching, options_.limits.max_queue,
                                              options_.threads, metrics_);
}

Service::~Service() { drain(); }

void Service::begin_draining() {
  draining_ = true;
  queue_->stop_waiting();
}

void Service::drain() {
  draining_ = true;
  queue_->stop();
}

Clock::time_point Service::deadline() const {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.limits.timeout_seconds));
}

void Service::check_api_key(const std::string* key) const {
  if (options_.api_keys.empty()) return;
  if (!key || key->empty()) throw ApiError(400, "Please contact the server operator to get an API key");
  for (const std::string& k : options_.api_keys)
    if (k.size() == key->size() && CRYPTO_memcmp(k.data(), key->data(), k.size()) == 0) return;
  throw ApiError(403, "Invalid API key");
}

Service::Sentences Service::encode(int model, const std::vector<std::string>& texts, bool crop) const {
  const LoadedModel& m = models_[static_cast<std::size_t>(model)].loaded;
  const int max_tokens = m.model->config().max_positions - 1;
  Sentences s;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto ids = m.vocabulary->encode(texts[i]);
    s.tokens.push_back(static_cast<int>(ids.size()));
    s.cropped.push_back(static_cast<int>(ids.size()) > max_tokens);
    if (s.cropped.back()) {
      if (!crop)
        invalid("text " + std::to_string(i + 1) + " is " + std::to_string(ids.size()) +
                " tokens long; the model reads at most " + std::to_string(max_tokens));
      ids.resize(static_cast<std::size_t>(max_tokens));
    }
    s.ids.push_back(std::move(ids));
  }
  return s;
}

// ---- LibreTranslate ----------------------------------------------------------------------

nlohmann::json Service::languages() const {
  std::map<std::string, std::vector<std::string>> targets;
  for (const ServedModel& m : models_) targets[m.spec.source].push_back(m.spec.target);
  for (const ServedModel& m : models_) targets.emplace(m.spec.target, std::vector<std::string>{});
  json out = json::array();
  for (auto& [code, list] : targets) {
    std::sort(list.begin(), list.end());
    out.push_back({{"code", code}, {"name", language_name(code)}, {"targets", list}});
  }
  return out;
}

// What LibreTranslate's own page asks first; clients built on it read the limits from here.
nlohmann::json Service::frontend_settings() const {
  const ModelSpec& first = models_.front().spec;
  return {{"charLimit", options_.limits.max_chars},
          {"frontendTimeout", 500},
          {"apiKeys", !options_.api_keys.empty()},
          {"keyRequired", !options_.api_keys.empty()},
          {"suggestions", false},
          {"filesTranslation", false},
          {"supportedFilesFormat", json::array()},
          {"language",
           {{"source", {{"code", first.source}, {"name", language_name(first.source)}}},
            {"target", {{"code", first.target}, {"name", language_name(first.target)}}}}}};
}

nlohmann::json Service::libre_translate(const nlohmann::json& request) {
  if (!request.is_object()) throw ApiError(400, "Invalid JSON format");
  for (const char* key : {"q", "source", "target"})
    if (!request.contains(key) || empty_value(request[key])) invalid(std::string("missing ") + key + " parameter");
  const json& q = request["q"];
  std::vector<std::string> texts = texts_of(q);
  check_text_limits(texts, options_.limits);
  const std::string* source = string_field(request, "source");
  const std::string* target = string_field(request, "target");
  if (*source == "auto")
    throw ApiError(400, "auto is not supported: attn does not detect languages; give the source language code");
  const auto has = [&](auto member) {
    return std::any_of(models_.begin(), models_.end(), [&](const ServedModel& m) { return member(m.spec); });
  };
  if (!has([&](const ModelSpec& s) { return s.source == *source || s.target == *source; }))
    throw ApiError(400, *source + " is not supported");
  if (!has([&](const ModelSpec& s) { return s.source == *target || s.target == *target; }))
    throw ApiError(400, *target + " is not supported");
  const std::string* format = string_field(request, "format");
  if (format && !format->empty() && *format != "text") throw ApiError(400, *format + " format is not supported");
  int model = -1;
  for (std::size_t i = 0; i < models_.size(); ++i)
    if (models_[i].spec.source == *source && models_[i].spec.target == *target) model = static_cast<int>(i);
  if (model < 0)
    throw ApiError(400, language_name(*target) + " (" + *target + ") is not available as a target language from " +
                            language_name(*source) + " (" + *source + ")");
  const int alternatives = integer(request, "alternatives", 0, 0, 16);
  if (draining_) throw ApiError(503, "The server is shutting down");

  // Each line of a text is a sentence (LibreTranslate's clients send paragraphs); the lines'
  // translations are joined again with newlines.
  std::vector<std::string> lines;
  std::vector<std::size_t> first_line;
  for (const std::string& text : texts) {
    first_line.push_back(lines.size());
    std::size_t start = 0;
    for (;;) {
      const std::size_t end = text.find('\n', start);
      std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  first_line.push_back(lines.size());
  Sentences sentences = encode(model, lines, /*crop=*/false);
  JobOptions job;
  job.search.n_best = 1 + alternatives;
  job.search.beam_size = std::max(job.search.beam_size, job.search.n_best);
  const auto results = queue_->translate(model, job, std::move(sentences.ids), deadline());
  const data::Vocabulary& vocabulary = *models_[static_cast<std::size_t>(model)].loaded.vocabulary;
  json translated = json::array(), alternative = json::array();
  for (std::size_t t = 0; t < texts.size(); ++t) {
    std::string text;
    std::vector<std::string> alts(static_cast<std::size_t>(alternatives));
    for (std::size_t l = first_line[t]; l < first_line[t + 1]; ++l) {
      const auto& n_best = results[l].n_best;
      if (l > first_line[t]) {
        text += '\n';
        for (auto& a : alts) a += '\n';
      }
      if (!n_best.empty()) text += vocabulary.decode(n_best[0].tokens);
      for (std::size_t a = 0; a < alts.size(); ++a)
        alts[a] += vocabulary.decode(n_best.size() > a + 1 ? n_best[a + 1].tokens : std::vector<std::int32_t>{});
    }
    translated.push_back(text);
    // Alternatives that differ from the translation (a one-line text has exactly those of the beam).
    json list = json::array();
    for (const auto& a : alts)
      if (a != text && std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
    alternative.push_back(list);
  }
  json out;
  out["translatedText"] = q.is_array() ? translated : translated[0];
  if (alternatives > 0) out["alternatives"] = q.is_array() ? alternative : alternative[0];
  return out;
}

// ---- attn's API ---------------------------------------------------------------------------

int Service::model_for(const nlohmann::json& request) const {
  const std::string* id = string_field(request, "model");
  const std::string* source = string_field(request, "source");
  const std::string* target = string_field(request, "target");
  std::string known;
  for (const ServedModel& m : models_) known += (known.empty() ? "" : ", ") + m.spec.id();
  for (std::size_t i = 0; i < models_.size(); ++i) {
    const ModelSpec& s = models_[i].spec;
    if ((id && *id == s.id()) || (!id && source && target && *source == s.source && *target == s.target))
      return static_cast<int>(i);
  }
  if (!id && !source && !target && models_.size() == 1) return 0;
  if (!id && !(source && target)) invalid("give model (one of " + known + "), or source and target");
  throw ApiError(404, "No model " + (id ? *id : *source + "-" + *target) + " (this server has " + known + ")");
}

nlohmann::json Service::translate(const nlohmann::json& request) {
  if (!request.is_object()) invalid("the body must be a JSON object");
  static const std::vector<std::string> keys{
      "model",        "source",       "target",     "q",         "beam",      "alpha",  "n_best",
      "max_length_a", "max_length_b", "min_length", "attention", "alignment", "api_key"};
  for (const auto& [key, v] : request.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) invalid("unknown key \"" + key + "\"");
  const int model = model_for(request);
  if (!request.contains("q") || request["q"].is_null()) invalid("missing q parameter");
  const std::vector<std::string> texts = texts_of(request["q"]);
  check_text_limits(texts, options_.limits);
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (texts[i].find('\n') != std::string::npos)
      invalid("text " + std::to_string(i + 1) + " has several lines: send each line as a text of its own");
  const ServedModel& served = models_[static_cast<std::size_t>(model)];
  const ModelConfig& config = served.loaded.model->config();

  JobOptions job;
  SearchOptions& s = job.search;
  s.beam_size = integer(request, "beam", s.beam_size, 1, kMaxBeam);
  s.length_penalty = static_cast<float>(number(request, "alpha", s.length_penalty, 0, 100));
  s.n_best = std::min(integer(request, "n_best", s.n_best, 1, kMaxBeam), s.beam_size);
  s.max_length_a = static_cast<float>(number(request, "max_length_a", s.max_length_a, 0, 100));
  s.max_length_b = integer(request, "max_length_b", s.max_length_b, 0, 100000);
  s.min_length = integer(request, "min_length", s.min_length, 0, 1024);
  const json attention = request.value("attention", json(false));
  const json alignment = request.value("alignment", json(false));
  const bool want_attention = !(attention.is_boolean() && !attention.get<bool>());
  const bool want_alignment = !(alignment.is_boolean() && !alignment.get<bool>());
  if (want_attention || want_alignment) {
    job.export_attention = true;
    job.attention = want_attention ? attention_selection(attention, config) : attention_selection(json(true), config);
  }
  inspect::AlignmentOptions align;
  if (want_alignment) {
    int layer = -1;
    std::string head = "mean";
    double threshold = 0;
    if (alignment.is_object()) {
      for (const auto& [key, v] : alignment.items())
        if (key != "layer" && key != "head" && key != "threshold")
          invalid("alignment has no key \"" + key + "\" (it takes layer, head, threshold)");
      layer = integer(alignment, "layer", -1, 0, 1 << 20);
      if (alignment.contains("head")) {
        const json& h = alignment["head"];
        if (h.is_number_integer())
          head = std::to_string(h.get<long long>());
        else if (h.is_string())
          head = h.get<std::string>();
        else
          invalid("alignment.head must be a head number or \"mean\"");
      }
      threshold = number(alignment, "threshold", 0, 0, 1);
    } else if (!alignment.is_boolean()) {
      invalid("alignment must be true, false or an object {layer, head, threshold}");
    }
    try {
      align = resolve_alignment(config, job.attention, layer, head, threshold);
    } catch (const Error& e) {
      invalid(std::string("alignment: ") + e.what());
    }
  }
  if (draining_) throw ApiError(503, "The server is shutting down");

  Sentences sentences = encode(model, texts, /*crop=*/true);
  const std::vector<std::vector<std::int32_t>> source_ids = sentences.ids;
  auto results = queue_->translate(model, job, std::move(sentences.ids), deadline());
  if (want_attention) {
    std::size_t weights = 0;
    for (const SentenceResult& r : results)
      for (const inspect::AttentionMatrix& m : r.attention) weights += m.weights.size();
    if (weights > kMaxAttentionWeights)
      throw ApiError(413, "Request Entity Too Large: the attention asked for holds " + std::to_string(weights) +
                              " weights, more than " + std::to_string(kMaxAttentionWeights) +
                              " a reply may carry; ask for fewer texts, kinds, layers or heads");
  }
  const data::Vocabulary& vocabulary = *served.loaded.vocabulary;
  json translations = json::array();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    SentenceResult& r = results[i];
    json t;
    json n_best = json::array();
    for (const Hypothesis& h : r.n_best) n_best.push_back(hypothesis_json(vocabulary, h));
    const Hypothesis* best = r.n_best.empty() ? nullptr : &r.n_best.front();
    t["text"] = best ? n_best[0]["text"] : json("");
    t["score"] = best ? best->score : 0.0;
    t["log_prob"] = best ? best->log_prob : 0.0;
    t["source_tokens"] = sentences.tokens[i] > 0 ? sentences.tokens[i] + 1 : 0;  // with </s>, as target_tokens
    t["target_tokens"] = best ? static_cast<int>(best->tokens.size()) + 1 : 0;
    t["cropped"] = static_cast<bool>(sentences.cropped[i]);
    t["n_best"] = std::move(n_best);
    if (job.export_attention) {
      const inspect::AttentionRecord record =
          make_attention_record(vocabulary, static_cast<std::int64_t>(i) + 1, texts[i], t["text"].get<std::string>(),
                                source_ids[i], best ? best->tokens : std::vector<std::int32_t>{},
                                best ? best->log_prob : 0.0, best ? best->score : 0.0, std::move(r.attention));
      if (want_alignment) {
        t["alignment"] = best ? inspect::format_pharaoh(inspect::align_record(record, align)) : "";
        t["source_words"] = inspect::group_pieces(record.source_pieces).words;
        t["target_words"] = inspect::group_pieces(record.target_pieces).words;
      }
      if (want_attention) t["attention"] = json::parse(inspect::to_json_line(record));
    }
    translations.push_back(std::move(t));
  }
  json out{{"model", served.spec.id()}, {"translations", std::move(translations)}};
  if (want_alignment)
    out["alignment_options"] = {{"layer", align.layer},
                                {"head", align.head == inspect::kMeanOfHeads ? json("mean") : json(align.head)},
                                {"threshold", align.threshold}};
  return out;
}

nlohmann::json Service::score(const nlohmann::json& request) {
  if (!request.is_object()) invalid("the body must be a JSON object");
  for (const auto& [key, v] : request.items())
    if (key != "model" && key != "pairs" && key != "attention" && key != "api_key")
      invalid("unknown key \"" + key + "\" (score takes model, pairs, attention)");
  json which = json::object();
  if (request.contains("model")) which["model"] = request["model"];
  const int model = model_for(which);
  if (!request.contains("pairs") || !request["pairs"].is_array() || request["pairs"].empty())
    invalid("pairs must be a non-empty array of {\"source\": ..., \"target\": ...}");
  std::vector<std::string> sources, targets;
  for (std::size_t i = 0; i < request["pairs"].size(); ++i) {
    const json& pair = request["pairs"][i];
    const std::string where = "pairs[" + std::to_string(i) + "]";
    if (!pair.is_object() || !pair.contains("source") || !pair.contains("target") || !pair["source"].is_string() ||
        !pair["target"].is_string())
      invalid(where + " must be {\"source\": string, \"target\": string}");
    for (const char* side : {"source", "target"})
      if (auto bad = find_invalid_utf8(pair[side].get_ref<const std::string&>()))
        invalid(where + "." + side + " is not valid UTF-8 (byte " + std::to_string(*bad + 1) + ")");
    sources.push_back(pair["source"].get<std::string>());
    targets.push_back(pair["target"].get<std::string>());
  }
  std::vector<std::string> all = sources;
  all.insert(all.end(), targets.begin(), targets.end());
  if (sources.size() > static_cast<std::size_t>(options_.limits.max_texts))
    invalid("request (" + std::to_string(sources.size()) + ") exceeds text limit (" +
            std::to_string(options_.limits.max_texts) + ")");
  Limits chars = options_.limits;
  chars.max_texts = static_cast<int>(all.size());
  check_text_limits(all, chars);
  const ServedModel& served = models_[static_cast<std::size_t>(model)];
  const bool want_attention =
      request.contains("attention") && !(request["attention"].is_boolean() && !request["attention"].get<bool>());
  AttentionSelection selection;
  if (want_attention) selection = attention_selection(request["attention"], served.loaded.model->config());
  if (draining_) throw ApiError(503, "The server is shutting down");
  // The task owns what it reads and writes: if this request times out while the worker runs it,
  // the worker finishes on the task's copies, not on this (unwound) frame.
  struct Work {
    Sentences s, t;
    AttentionSelection selection;
    bool attention = false;
    std::vector<ForcedDecoding> results;
  };
  auto work = std::make_shared<Work>(
      Work{encode(model, sources, false), encode(model, targets, false), selection, want_attention, {}});
  queue_->run(
      model,
      [work](Transformer& m) {
        work->results = force_decode(m, work->s.ids, work->t.ids, 32, work->attention ? &work->selection : nullptr);
      },
      deadline());
  const Sentences &s = work->s, &t = work->t;
  const std::vector<ForcedDecoding>& results = work->results;
  json scores = json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ForcedDecoding& r = results[i];
    json one{{"log_prob", r.log_prob},
             {"target_tokens", r.target_tokens},
             {"perplexity", std::exp(-r.log_prob / std::max(r.target_tokens, 1))}};
    if (want_attention)
      one["attention"] = json::parse(inspect::to_json_line(
          make_attention_record(*served.loaded.vocabulary, static_cast<std::int64_t>(i) + 1, sources[i], targets[i],
                                s.ids[i], t.ids[i], r.log_prob, r.log_prob, r.attention)));
    scores.push_back(std::move(one));
  }
  return {{"model", served.spec.id()}, {"scores", std::move(scores)}};
}

nlohmann::json Service::models() const {
  json list = json::array();
  for (const ServedModel& m : models_) {
    const ModelConfig& c = m.loaded.model->config();
    list.push_back({{"id", m.spec.id()},
                    {"source", m.spec.source},
                    {"target", m.spec.target},
                    {"path", m.spec.dir.string()},
                    {"shortlist", m.shortlist ? json{{"path", m.spec.shortlist.string()}, {"k", m.spec.shortlist_k}}
                                              : json(nullptr)},
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
                    {"defaults",
                     {{"beam", 4},
                      {"alpha", 0.6},
                      {"n_best", 1},
                      {"max_length_a", 1.0},
                      {"max_length_b", 50},
                      {"min_length", 0}}}});
  }
  return {{"models", list}};
}

nlohmann::json Service::health() const {
  json ids = json::array();
  for (const ServedModel& m : models_) ids.push_back(m.spec.id());
  return {{"status", draining_ ? "draining" : "ok"}, {"models", ids}, {"queued_sentences", queued_sentences()}};
}

}  // namespace attn::serve
