#include "serve/service.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "core/error.h"
#include "document/document_file.h"
#include "document/html_document.h"
#include "document/markdown_document.h"
#include "document/text_document.h"
#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "decode/search_options.h"
#include "inspect/word_alignment.h"
#include "serve/api_error.h"
#include "serve/document_sentences.h"
#include "serve/encoded_texts.h"
#include "serve/libre_languages.h"
#include "serve/libre_translate.h"
#include "serve/request_fields.h"
#include "serve/v1_reply.h"
#include "serve/v1_request.h"

namespace attn::serve {

using nlohmann::json;

Service::Service(const ServeOptions& options) : options_(options) {
  if (options_.models.empty()) throw Error("attn serve needs at least one --model SRC-TGT=DIR");
  for (std::size_t i = 0; i < options_.models.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (options_.models[i].id() == options_.models[j].id())
        throw Error("--model " + options_.models[i].id() + " is given twice");
  queue_ = std::make_unique<TranslationQueue>(models_, options_.models, options_.batching, options_.limits.max_queue,
                                              options_.threads, metrics_);
  for (const ServedModel& m : models_) configs_.push_back(m.loaded.model->config());
  files_ = std::make_unique<FileStore>(options_.files_dir, options_.files_keep_seconds);
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

// Checked once a request is found valid: a request that is wrong hears so even while draining.
void Service::check_not_draining() const {
  if (draining_) throw ApiError(503, "The server is shutting down");
}

void Service::check_api_key(const std::string* key) const {
  if (options_.api_keys.empty()) return;
  if (!key || key->empty()) throw ApiError(400, "Please contact the server operator to get an API key");
  for (const std::string& k : options_.api_keys)
    if (k.size() == key->size() && CRYPTO_memcmp(k.data(), key->data(), k.size()) == 0) return;
  throw ApiError(403, "Invalid API key");
}

// ---- LibreTranslate ----------------------------------------------------------------------

nlohmann::json Service::languages() const { return languages_reply(options_.models); }

nlohmann::json Service::frontend_settings() const {
  return frontend_settings_reply(options_.models, options_.limits, !options_.api_keys.empty());
}

std::vector<document::DetectedLanguage> Service::detect_texts(const std::vector<std::string>& texts,
                                                              const std::vector<std::string>& candidates,
                                                              const std::string& into) const {
  std::vector<document::DetectedLanguage> out;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto found = document::detect_language(texts[i], candidates);
    if (!found.empty()) {
      out.push_back(found.front());
      continue;
    }
    std::string served;
    for (const auto& c : candidates) served += (served.empty() ? "" : ", ") + c;
    const std::string which = texts.size() > 1 ? "text " + std::to_string(i + 1) : "the text";
    const std::string any = document::detect_any_language(texts[i]);
    if (any.empty())
      throw ApiError(400, "Cannot detect the language of " + which + ": give the source language (" + served + ")");
    throw ApiError(400, "The language of " + which + " looks like " + language_name(any) + " (" + any +
                            "), which is not served" + (into.empty() ? "" : " into " + into) + " (sources: " + served +
                            ")");
  }
  return out;
}

std::vector<std::string> Service::translate_texts(int model, const std::vector<std::string>& texts,
                                                  const std::string& format) {
  const ServedModel& served = models_[static_cast<std::size_t>(model)];
  std::vector<document::Document> documents;
  try {
    for (const std::string& text : texts)
      documents.push_back(format == "html" ? document::read_html(text) : document::read_text(text, /*lines=*/true));
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }
  const auto translate = queue_sentences(*queue_, model, served, JobOptions{}, deadline());
  return document::translate_documents(documents, translate, served_document_options(served, "")).outputs;
}

nlohmann::json Service::libre_translate(const nlohmann::json& request) {
  const LibreRequest r = read_libre_request(request, options_.models, options_.limits);
  std::vector<int> model_of(r.texts.size(), r.model);
  json detected = json::array();
  if (r.detect) {
    const auto found = detect_texts(r.texts, sources_into(options_.models, r.target), r.target);
    for (std::size_t i = 0; i < found.size(); ++i) {
      model_of[i] = libre_model(options_.models, found[i].language, r.target);
      detected.push_back({{"confidence", found[i].confidence}, {"language", found[i].language}});
    }
  }
  check_not_draining();
  json out;
  if (r.alternatives > 0 && r.format == "text") {
    // Alternatives are whole translations of a line: each line one sentence, as before.
    std::vector<std::vector<std::string>> n_best;
    TextLines all;
    for (std::size_t t = 0; t < r.texts.size(); ++t) {
      const TextLines lines = split_lines({r.texts[t]});
      const ServedModel& served = models_[static_cast<std::size_t>(model_of[t])];
      EncodedTexts sentences = encode_texts(served.loaded, lines.lines, /*crop=*/false);
      JobOptions job;
      job.search.n_best = 1 + r.alternatives;
      job.search.beam_size = std::max(job.search.beam_size, job.search.n_best);
      if (const auto problem = check(job.search)) invalid_request(problem->message);  // the rule of every face
      const auto results = queue_->translate(model_of[t], job, std::move(sentences.ids), deadline());
      all.first_line.push_back(all.lines.size());
      for (std::size_t l = 0; l < results.size(); ++l) {
        all.lines.push_back(lines.lines[l]);
        n_best.emplace_back();
        for (const Hypothesis& h : results[l].n_best)
          n_best.back().push_back(served.loaded.vocabulary->decode_line(h.tokens));
      }
    }
    all.first_line.push_back(all.lines.size());
    out = libre_reply(all, n_best, r.alternatives, r.several);
  } else {
    // Texts as documents: paragraphs and sentences (or HTML), the texts of one model in one job.
    std::vector<std::string> translated(r.texts.size());
    for (std::size_t t = 0; t < r.texts.size(); ++t) {
      if (!translated[t].empty() || r.texts[t].empty()) continue;
      std::vector<std::size_t> mine;
      std::vector<std::string> texts;
      for (std::size_t u = t; u < r.texts.size(); ++u)
        if (model_of[u] == model_of[t]) mine.push_back(u), texts.push_back(r.texts[u]);
      const auto outputs = translate_texts(model_of[t], texts, r.format);
      for (std::size_t k = 0; k < mine.size(); ++k) translated[mine[k]] = outputs[k];
    }
    out["translatedText"] = r.several ? json(translated) : json(translated.front());
  }
  if (r.detect) out["detectedLanguage"] = r.several ? detected : detected.front();
  return out;
}

nlohmann::json Service::detect(const nlohmann::json& request) {
  if (!request.is_object()) throw ApiError(400, "Invalid JSON format");
  if (!request.contains("q") || empty_value(request["q"])) invalid_request("missing q parameter");
  const std::vector<std::string> texts = texts_of(request["q"]);
  check_text_limits(texts, options_.limits);
  const std::vector<std::string> sources = served_sources(options_.models);
  json all = json::array();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    detect_texts({texts[i]}, sources, "");  // 400 when nothing served is found
    json list = json::array();
    for (const auto& d : document::detect_language(texts[i], sources))
      list.push_back({{"confidence", d.confidence}, {"language", d.language}});
    all.push_back(list);
  }
  return request["q"].is_array() ? all : all.front();
}

nlohmann::json Service::translate_file(const std::string& bytes, const std::string& filename,
                                       const nlohmann::json& fields, const std::string& url_root) {
  for (const char* key : {"source", "target"})
    if (!fields.contains(key) || empty_value(fields[key]))
      invalid_request(std::string("missing ") + key + " parameter");
  if (bytes.size() > options_.limits.max_file_bytes)
    throw ApiError(413, "Request Entity Too Large: the file is larger than " +
                            std::to_string(options_.limits.max_file_bytes) + " bytes");
  std::string name;
  try {
    name = FileStore::safe_name(filename);
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }
  const auto format = document::format_of_path(name);
  if (!format) {
    std::string known;
    for (const auto& e : document::file_extensions()) known += (known.empty() ? "" : ", ") + e;
    throw ApiError(400, "Invalid request: " + name + " is not a supported file (" + known + ")");
  }
  if (!fields["source"].is_string() || !fields["target"].is_string())
    invalid_request("source and target must be language codes");
  std::string source = fields["source"].get<std::string>();
  const std::string target = fields["target"].get<std::string>();
  const auto served_language = [&](const std::string& code) {
    return std::any_of(options_.models.begin(), options_.models.end(),
                       [&](const ModelSpec& s) { return s.source == code || s.target == code; });
  };
  if (!served_language(target)) throw ApiError(400, target + " is not supported");
  if (source == "auto") {  // the language of the text the file would have translated
    std::string text;
    try {
      text = document::file_text(bytes, *format);
    } catch (const Error& e) {
      throw ApiError(400, "Invalid request: " + name + ": " + e.what());
    }
    source = detect_texts({text}, sources_into(options_.models, target), target).front().language;
  }
  if (!served_language(source)) throw ApiError(400, source + " is not supported");
  const int model = libre_model(options_.models, source, target);
  check_not_draining();
  const ServedModel& served = models_[static_cast<std::size_t>(model)];
  document::FileTranslation t;
  try {
    t = document::translate_file(bytes, *format, queue_sentences(*queue_, model, served, JobOptions{}, deadline()),
                                 served_document_options(served, ""));
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    throw ApiError(400, "Invalid request: " + name + ": " + e.what());
  }
  const std::string kept = files_->put(t.bytes, name);
  return {{"translatedFileUrl", url_root + "download_file/" + kept}};
}

std::string Service::download_file(const std::string& name) {
  auto bytes = files_->get(name);
  if (!bytes)
    throw ApiError(404, "Not Found: no file " + name + " (files are kept " +
                            std::to_string(static_cast<long>(options_.files_keep_seconds / 60)) + " minutes)");
  return *bytes;
}

// ---- attn's API ---------------------------------------------------------------------------

nlohmann::json Service::translate(const nlohmann::json& request) {
  const TranslateRequest r = read_translate_request(request, options_.models, configs_, options_.limits);
  check_not_draining();
  if (r.format != "lines") return translate_documents(r);
  const ServedModel& served = models_[static_cast<std::size_t>(r.model)];
  const EncodedTexts sources = encode_texts(served.loaded, r.texts, /*crop=*/true);
  auto results = queue_->translate(r.model, r.job, sources.ids, deadline());
  return translate_reply(r, served.spec.id(), *served.loaded.vocabulary, sources, std::move(results));
}

// Each text a document: its sentences translated with the request's options in one queue job, each
// sentence's translation answered as /v1 answers a line (attention and alignment where asked).
nlohmann::json Service::translate_documents(const TranslateRequest& r) {
  const ServedModel& served = models_[static_cast<std::size_t>(r.model)];
  std::vector<document::Document> documents;
  try {
    for (const std::string& text : r.texts)
      documents.push_back(r.format == "html"       ? document::read_html(text)
                          : r.format == "markdown" ? document::read_markdown(text)
                                                   : document::read_text(text));
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }
  const ModelConfig& config = configs_[static_cast<std::size_t>(r.model)];
  const int align_layer = inspect::default_alignment_layer(config.decoder_layers);
  // What the sentences were, as encoded, and what came back: the reply is built from them.
  TranslateRequest as_lines = r;
  as_lines.texts.clear();
  EncodedTexts sources;
  std::vector<SentenceResult> results;
  const auto translate = [&](const std::vector<std::string>& sentences, const std::vector<bool>& placing_each) {
    const bool placing = std::find(placing_each.begin(), placing_each.end(), true) != placing_each.end();
    JobOptions job = r.job;
    job.search.n_best = 1;
    if (placing || r.want_attention || r.want_alignment) {
      job.export_attention = true;
      if (!r.want_attention && !r.want_alignment) job.attention = AttentionSelection{};
      if (job.attention.cross && !job.attention.layers.empty() &&
          std::find(job.attention.layers.begin(), job.attention.layers.end(), align_layer) ==
              job.attention.layers.end())
        job.attention.layers.push_back(align_layer), job.attention.check(config);
    }
    const inspect::AlignmentOptions placement = resolve_alignment(config, job.attention, -1, "mean", 0);
    EncodedTexts encoded = encode_texts(served.loaded, sentences, /*crop=*/true);
    auto got = queue_->translate(r.model, job, encoded.ids, deadline());
    std::vector<document::SentenceTranslation> out(sentences.size());
    const data::Vocabulary& vocabulary = *served.loaded.vocabulary;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      out[i].cropped = encoded.cropped[i];
      if (!got[i].n_best.empty()) out[i].text = vocabulary.decode_line(got[i].n_best.front().tokens);
      if (placing_each[i] && !got[i].n_best.empty()) {
        const auto record = translation_record(vocabulary, 1, sentences[i], out[i].text, encoded.ids[i], got[i].n_best,
                                               got[i].attention);
        for (const inspect::Link& link : inspect::align_record(record, placement))
          out[i].links.push_back({link.source, link.target});
      }
      as_lines.texts.push_back(sentences[i]);
      sources.ids.push_back(encoded.ids[i]);
      sources.tokens.push_back(encoded.tokens[i]);
      sources.cropped.push_back(encoded.cropped[i]);
      results.push_back(std::move(got[i]));
    }
    return out;
  };
  const auto t = document::translate_documents(documents, translate, served_document_options(served, ""));
  // The reply of each sentence as a line, in the order they were sent; then grouped by text.
  const json lines =
      translate_reply(as_lines, served.spec.id(), *served.loaded.vocabulary, sources, std::move(results));
  json out;
  out["model"] = served.spec.id();
  out["format"] = r.format;
  json translations = json::array();
  std::vector<bool> taken(as_lines.texts.size(), false);
  std::vector<std::size_t> first_segment;
  std::size_t segments = 0;
  for (const auto& d : documents) first_segment.push_back(segments), segments += d.segments.size();
  for (std::size_t i = 0; i < documents.size(); ++i) {
    json sentences = json::array();
    for (std::size_t k = 0; k < t.details.sentences.size(); ++k) {
      const auto seg = static_cast<std::size_t>(t.details.sentences[k].segment);
      if (seg < first_segment[i] || seg >= first_segment[i] + documents[i].segments.size()) continue;
      // Sentences went out in two batches (with and without markup): each one's reply is the first
      // not yet taken that was sent with its text.
      const std::string& source = t.details.sentences[k].source;
      json one = json::object();
      for (std::size_t j = 0; j < as_lines.texts.size(); ++j)
        if (!taken[j] && as_lines.texts[j] == source) {
          taken[j] = true;
          one = lines["translations"][j];
          break;
        }
      one["source"] = source;
      sentences.push_back(one);
    }
    translations.push_back({{"text", t.outputs[i]}, {"sentences", sentences}});
  }
  out["translations"] = translations;
  out["warnings"] = t.details.warnings;
  if (lines.contains("alignment_options")) out["alignment_options"] = lines["alignment_options"];
  return out;
}

nlohmann::json Service::score(const nlohmann::json& request) {
  const ScoreRequest r = read_score_request(request, options_.models, configs_, options_.limits);
  check_not_draining();
  const ServedModel& served = models_[static_cast<std::size_t>(r.model)];
  // The task owns what it reads and writes: if this request times out while the worker runs it,
  // the worker finishes on the task's copies, not on this (unwound) frame.
  struct Work {
    EncodedTexts s, t;
    AttentionSelection selection;
    bool attention = false;
    std::vector<ForcedDecoding> results;
  };
  auto work = std::make_shared<Work>(Work{encode_texts(served.loaded, r.sources, false),
                                          encode_texts(served.loaded, r.targets, false),
                                          r.attention,
                                          r.want_attention,
                                          {}});
  queue_->run(
      r.model,
      [work](Transformer& m) {
        work->results = force_decode(m, work->s.ids, work->t.ids, 32, work->attention ? &work->selection : nullptr);
      },
      deadline());
  return score_reply(r, served.spec.id(), *served.loaded.vocabulary, work->s, work->t, work->results);
}

nlohmann::json Service::models() const { return models_reply(options_.models, configs_); }

nlohmann::json Service::health() const {
  json ids = json::array();
  for (const ServedModel& m : models_) ids.push_back(m.spec.id());
  return {{"status", draining_ ? "draining" : "ok"}, {"models", ids}, {"queued_sentences", queued_sentences()}};
}

}  // namespace attn::serve
