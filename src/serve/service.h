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

#include "document/language_detection.h"
#include "model/model_config.h"
#include "serve/file_store.h"
#include "serve/metrics.h"
#include "serve/serve_options.h"
#include "serve/translation_queue.h"
#include "serve/v1_request.h"

namespace attn::serve {

class Service {
 public:
  // Loads every model (Error naming the folder and file on failure) and starts the worker.
  explicit Service(const ServeOptions& options);
  ~Service();

  nlohmann::json libre_translate(const nlohmann::json& request);  // POST /translate
  nlohmann::json detect(const nlohmann::json& request);           // POST /detect
  // POST /translate_file: the upload's bytes and name, the form's other fields (source, target),
  // and the URL the service is reached at ("http://host:port/"), for translatedFileUrl.
  nlohmann::json translate_file(const std::string& bytes, const std::string& filename, const nlohmann::json& fields,
                                const std::string& url_root);
  // GET /download_file/<name>: the file's bytes; ApiError 404 for a name not kept (or expired).
  std::string download_file(const std::string& name);
  nlohmann::json languages() const;                         // GET /languages
  nlohmann::json frontend_settings() const;                 // GET /frontend/settings
  nlohmann::json translate(const nlohmann::json& request);  // POST /v1/translate
  nlohmann::json score(const nlohmann::json& request);      // POST /v1/score
  nlohmann::json models() const;                            // GET /v1/models
  nlohmann::json health() const;                            // GET /health

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
  // Each text's language among `candidates`; ApiError 400 naming what was found otherwise.
  std::vector<document::DetectedLanguage> detect_texts(const std::vector<std::string>& texts,
                                                       const std::vector<std::string>& candidates,
                                                       const std::string& into) const;
  nlohmann::json translate_documents(const TranslateRequest& r);  // /v1/translate with a format
  // Texts in `format` ("text" or "html") translated by `model` as documents, in one queue job.
  std::vector<std::string> translate_texts(int model, const std::vector<std::string>& texts, const std::string& format);

  ServeOptions options_;
  std::vector<ServedModel> models_;
  std::vector<ModelConfig> configs_;  // models_[i]'s configuration
  Metrics metrics_;
  std::unique_ptr<TranslationQueue> queue_;
  std::unique_ptr<FileStore> files_;
  std::atomic<bool> draining_{false};
};

}  // namespace attn::serve
