// `attn serve`: the HTTP service (docs/serve.md). SIGTERM or SIGINT: stop accepting, answer what
// is in flight, exit 0. The options are assembled by serve/serve_arguments.h; the stopping is
// serve/stop_signals.h's.
#include <iostream>

#include "cli/commands.h"
#include "serve/http_server.h"
#include "serve/serve_arguments.h"
#include "serve/service.h"
#include "serve/stop_signals.h"

namespace attn::cli {
namespace {

void run(const serve::ServeOptions& o) {
  serve::StopSignals signals;  // before the service and the server start their threads
  serve::Service service(o);
  serve::HttpServer http(service);
  const int port = http.bind(o.host, o.port);
  std::cout << "listening on http://" << o.host << ":" << port << std::endl;
  std::cerr << "attn serve: " << o.models.size() << " model(s)";
  for (const auto& m : o.models) std::cerr << " " << m.id() << " (" << m.dir.string() << ")";
  std::cerr << "; open http://" << o.host << ":" << port << "/ in a browser" << std::endl;
  signals.serve(service, http, o.drain_seconds, o.host, port, std::cerr);
  std::cerr << "attn serve: stopped" << std::endl;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<serve::ServeArguments>();
  serve::ServeOptions& o = args->options;
  CLI::App* sub =
      app.add_subcommand("serve", "HTTP translation service: LibreTranslate's API, attn's /v1 API, a web page");
  sub->add_option("-m,--model", args->models,
                  "SRC-TGT=DIR, e.g. en-es=runs/en-es/model, or DIR for the languages the folder records (repeat for "
                  "more models)")
      ->required();
  add_precision_option(sub, args->precision);
  sub->add_option("--host", o.host, "address to listen on (0.0.0.0: every interface)")->capture_default_str();
  sub->add_option("--port", o.port, "port (0: any free port; the first line of output names it)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  sub->add_option("--api-key", args->api_key,
                  "require this key on translation requests (api_key, or Authorization: Bearer)");
  sub->add_option("--api-key-file", args->api_key_file, "require one of the keys in this file (one per line)");
  add_batching_options(sub, o.batching.batch_tokens, o.batching.max_batch_sentences);
  sub->add_option("--batch-wait-ms", o.batching.wait_ms, "how long a sentence waits for others to batch with")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  sub->add_option("--max-body-bytes", o.limits.max_body_bytes, "largest request body (413 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 32));
  sub->add_option("--max-texts", o.limits.max_texts, "texts per request (400 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--max-chars", o.limits.max_chars, "characters per request, all texts together (400 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  sub->add_option("--max-queue", o.limits.max_queue, "sentences waiting to be translated (429 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--timeout", o.limits.timeout_seconds, "seconds a request may wait and run (503 beyond)")
      ->capture_default_str()
      ->check(finite_in(0.001, 86400));
  sub->add_option("--read-timeout", o.limits.read_timeout_seconds, "seconds a silent connection is kept")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  sub->add_option("--http-threads", o.http_threads, "connections served at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  add_threads_option(sub, o.threads);
  sub->add_option(
      "--shortlist", args->shortlists,
      "SRC-TGT=FILE: decode that model over a lexical shortlist (`attn shortlist build`; repeat per model)");
  sub->add_option("--shortlist-k", args->shortlist_k, "candidates per source piece taken from each --shortlist")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--drain-seconds", o.drain_seconds,
                  "after SIGTERM/SIGINT, keep listening this long with /health at 503 \"draining\" and new work "
                  "refused, then close the port (a second signal closes it at once)")
      ->capture_default_str()
      ->check(finite_in(0, 3600));
  sub->add_option("--max-file-bytes", o.limits.max_file_bytes, "largest file /translate_file takes (413 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  sub->add_option("--files-dir", o.files_dir,
                  "where /translate_file keeps its translations for /download_file (default: a temporary folder, "
                  "removed when the service stops)");
  sub->add_option("--files-keep-minutes", o.files_keep_seconds,
                  "how long a translated file can be downloaded (minutes)")
      ->transform([](const std::string& v) { return std::to_string(std::stod(v) * 60); })
      ->check(CLI::PositiveNumber);
  sub->add_option("--page", o.page_file,
                  "serve this HTML file at / instead of the built-in page (to work on the page)");
  sub->callback([args] { run(serve::serve_options(*args)); });
}

}  // namespace attn::cli
