#include "serve/service.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "core/error.h"
#include "serve/api_error.h"
#include "serve/encoded_texts.h"
#include "serve/libre_languages.h"
#include "serve/libre_translate.h"
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

nlohmann::json Service::libre_translate(const nlohmann::json& request) {
  const LibreRequest r = read_libre_request(request, options_.models, options_.limits);
  check_not_draining();
  const TextLines lines = split_lines(r.texts);
  const ServedModel& served = models_[static_cast<std::size_t>(r.model)];
  EncodedTexts sentences = encode_texts(served.loaded, lines.lines, /*crop=*/false);
  JobOptions job;
  job.search.n_best = 1 + r.alternatives;
  job.search.beam_size = std::max(job.search.beam_size, job.search.n_best);
  const auto results = queue_->translate(r.model, job, std::move(sentences.ids), deadline());
  std::vector<std::vector<std::string>> n_best(results.size());
  for (std::size_t l = 0; l < results.size(); ++l)
    for (const Hypothesis& h : results[l].n_best) n_best[l].push_back(served.loaded.vocabulary->decode_line(h.tokens));
  return libre_reply(lines, n_best, r.alternatives, r.several);
}

// ---- attn's API ---------------------------------------------------------------------------

nlohmann::json Service::translate(const nlohmann::json& request) {
  const TranslateRequest r = read_translate_request(request, options_.models, configs_, options_.limits);
  check_not_draining();
  const ServedModel& served = models_[static_cast<std::size_t>(r.model)];
  const EncodedTexts sources = encode_texts(served.loaded, r.texts, /*crop=*/true);
  auto results = queue_->translate(r.model, r.job, sources.ids, deadline());
  return translate_reply(r, served.spec.id(), *served.loaded.vocabulary, sources, std::move(results));
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
