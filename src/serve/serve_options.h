#pragma once
// What `attn serve` is told: where to listen, the models, how to batch, the limits. Defaults are
// documented in docs/serve.md; every limit answers with a JSON error, never a hang or a crash.
#include <filesystem>
#include <string>
#include <vector>

#include "decode/shortlist.h"

namespace attn::serve {

struct ModelSpec {
  std::string source, target;            // language codes ("en", "es")
  std::filesystem::path dir;             // the model folder
  std::string precision;                 // load_model_directory's precision ("" as the file is)
  std::filesystem::path shortlist;       // a lexical shortlist to decode with (decode/shortlist.h); empty: none
  int shortlist_k = kDefaultShortlistK;  // candidates per source piece taken from it
  std::string id() const { return source + "-" + target; }
};

// "SRC-TGT=DIR" (e.g. "en-es=runs/en-es/model"), or "DIR" (languages left empty for
// resolve_languages); throws Error naming the expected form.
ModelSpec parse_model_spec(const std::string& text);
// A spec given as DIR takes the languages its folder records (attn train --source-lang
// --target-lang); throws Error naming the folder if it is not a model or records none.
void resolve_languages(ModelSpec& spec);

struct BatchOptions {
  int batch_tokens = 2048;       // source tokens per batch, padding included (as attn translate)
  int max_batch_sentences = 64;  // sentences per batch
  int wait_ms = 5;               // how long a batch that is not full waits to fill, once the worker is free
};

struct Limits {
  std::size_t max_body_bytes = 1 << 20;   // 413 beyond
  int max_texts = 128;                    // texts per request; 400 beyond (LibreTranslate's batch limit)
  int max_chars = 5000;                   // characters per request, all texts together (LibreTranslate's char limit)
  int max_queue = 4096;                   // sentences waiting; 429 beyond
  double timeout_seconds = 60;            // a request's wait + translation; 503 beyond
  int read_timeout_seconds = 5;           // a connection silent this long is closed
  std::size_t max_file_bytes = 10 << 20;  // an upload to /translate_file; 413 beyond
};

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::vector<ModelSpec> models;
  std::vector<std::string> api_keys;  // empty: no key needed
  BatchOptions batching;
  Limits limits;
  int http_threads = 128;  // connections served at once
  int threads = 0;         // matrix-product threads (0: all cores)
  std::string page_file;   // serve this file as the page instead of the built-in one
  // /translate_file's translations, kept for /download_file this long in this folder ("": a
  // temporary folder, removed when the service stops).
  std::string files_dir;
  double files_keep_seconds = 600;
  // After SIGTERM/SIGINT, keep listening this long (or until a second signal) with /health at 503
  // "draining" and new work refused with 503, so that a load balancer sees the state and stops
  // sending before the port closes; 0: stop listening at once.
  double drain_seconds = 0;
};

}  // namespace attn::serve
