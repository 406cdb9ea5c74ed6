#pragma once
// What the HTTP endpoints do, without HTTP: each call takes the request's JSON and returns the
// answer's JSON, or throws ApiError (status + message). LibreTranslate's API (/translate,
// /languages) with its shapes and wording, attn's own (/v1/...), health. docs/serve.md. The
// Service owns the models and the queue; requests are checked and replies assembled apart,
// without models: LibreTranslate's in libre_translate.h and libre_languages.h, attn's in
// v1_request.h and v1_reply.h.
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "serve/metrics.h"
#include "serve/serve_options.h"
#include "serve/translation_queue.h"

namespace attn::serve {

class Service {
 public:
  // Loads every model (Error naming the folder and file on failure) and starts the worker.
  explicit Service(const ServeOptions& options);
  ~Service();

  nlohmann::json libre_translate(const nlohmann::json& request);  // POST /translate
  nlohmann::json languages() const;                               // GET /languages
  nlohmann::json frontend_settings() const;                       // GET /frontend/settings
  nlohmann::json translate(const nlohmann::json& request);        // POST /v1/translate
  nlohmann::json score(const nlohmann::json& request);            // POST /v1/score
  nlohmann::json models() const;                                  // GET /v1/models
  nlohmann::json health() const;                                  // GET /health

  // Throws ApiError when keys are required and `key` is missing (400) or wrong (403).
  void check_api_key(const std::string* key) const;

  // Stops taking new translations (503, /health "draining"); what is queued is still translated,
  // without waiting for company.
  void begin_draining();
  // Stops taking translations, finishes the queued ones and joins the worker.
  void drain();
  bool draining() const { return draining_; }
  int queued_sentences() const { return queue_->queued_sentences(); }
  Metrics& metrics() { return metrics_; }
  const ServeOptions& options() const { return options_; }

 private:
  Clock::time_point deadline() const;
  void check_not_draining() const;

  ServeOptions options_;
  std::vector<ServedModel> models_;
  std::vector<ModelConfig> configs_;  // models_[i]'s configuration
  Metrics metrics_;
  std::unique_ptr<TranslationQueue> queue_;
  std::atomic<bool> draining_{false};
};

}  // namespace attn::serve
