// `attn serve`: the HTTP service (docs/serve.md). SIGTERM or SIGINT: stop accepting, answer what
// is in flight, exit 0.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "decode/shortlist.h"
#include "core/text_file.h"
#include "core/error.h"
#include "serve/http_server.h"
#include "serve/service.h"

namespace attn::cli {
namespace {

struct ServeArguments {
  serve::ServeOptions options;
  std::vector<std::string> models;
  std::string precision;
  std::string api_key, api_key_file;
  std::vector<std::string> shortlists;  // "SRC-TGT=FILE"
  int shortlist_k = kDefaultShortlistK;
};

std::vector<std::string> read_keys(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw_in(file, "cannot open");
  std::vector<std::string> keys;
  std::string line;
  while (read_line(in, line)) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty() && line[0] != '#') keys.push_back(line);
  }
  if (keys.empty()) throw_in(file, "holds no API key (one key per line)");
  return keys;
}

void run(ServeArguments& args) {
  serve::ServeOptions& o = args.options;
  for (const std::string& m : args.models) {
    o.models.push_back(serve::parse_model_spec(m));
    serve::resolve_languages(o.models.back());
    o.models.back().precision = args.precision;
  }
  for (const std::string& given : args.shortlists) {
    const auto equals = given.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == given.size())
      throw Error("--shortlist " + given + ": give SRC-TGT=FILE (e.g. en-es=runs/en-es/shortlist.txt)");
    const std::string id = given.substr(0, equals);
    std::string served;
    bool found = false;
    for (auto& m : o.models) {
      served += (served.empty() ? "" : ", ") + m.id();
      if (m.id() == id) m.shortlist = given.substr(equals + 1), found = true;
    }
    if (!found) throw Error("--shortlist " + given + ": no model " + id + " is served (served: " + served + ")");
  }
  for (auto& m : o.models) m.shortlist_k = args.shortlist_k;
  if (!args.api_key.empty()) o.api_keys.push_back(args.api_key);
  if (!args.api_key_file.empty())
    for (auto& k : read_keys(args.api_key_file)) o.api_keys.push_back(k);
  if (!o.page_file.empty() && !std::ifstream(o.page_file)) throw_in(o.page_file, "cannot open");

  // Signals go to one thread that waits for them; every other thread (the worker, httplib's)
  // inherits the mask and never sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  serve::Service service(o);
  serve::HttpServer http(service);
  const int port = http.bind(o.host, o.port);
  std::cout << "listening on http://" << o.host << ":" << port << std::endl;
  std::cerr << "attn serve: " << o.models.size() << " model(s)";
  for (const auto& m : o.models) std::cerr << " " << m.id() << " (" << m.dir.string() << ")";
  std::cerr << "; open http://" << o.host << ":" << port << "/ in a browser" << std::endl;

  std::atomic<bool> served{false}, signalled{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    signalled = true;
    if (served) return;  // woken by serve() returning on its own (below)
    std::cerr << "attn serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": no new connections; answering the requests in flight" << std::endl;
    service.begin_draining();
    if (o.drain_seconds > 0) {
      std::cerr << "attn serve: /health says \"draining\" for " << o.drain_seconds
                << " s before the port closes (a second signal closes it now)" << std::endl;
      const auto whole = static_cast<time_t>(o.drain_seconds);
      const timespec wait{whole, static_cast<long>((o.drain_seconds - static_cast<double>(whole)) * 1e9)};
      while (!served && sigtimedwait(&stop_signals, nullptr, &wait) < 0 && errno == EINTR) {
      }
    }
    // stop() before serve() has started listening is lost: repeat until serve() returned.
    while (!served) {
      http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  try {
    http.serve();  // returns after stop(), once the requests in flight are answered
  } catch (...) {
    served = true;
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    throw;
  }
  served = true;
  const bool stopped_by_signal = signalled;
  if (!stopped_by_signal) pthread_kill(waiter.native_handle(), SIGTERM);  // wake the waiter: nobody else will
  waiter.join();
  service.drain();
  if (!stopped_by_signal)
    throw Error("the HTTP server stopped listening on its own (" + o.host + ":" + std::to_string(port) + ")");
  std::cerr << "attn serve: stopped" << std::endl;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArguments>();
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
  sub->add_option("--batch-tokens", o.batching.batch_tokens, "source tokens per batch, padding included")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--max-batch-sentences", o.batching.max_batch_sentences, "sentences per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
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
  sub->add_option("--threads", o.threads, "CPU threads for the matrix products (0: all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
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
  sub->add_option("--page", o.page_file,
                  "serve this HTML file at / instead of the built-in page (to work on the page)");
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
