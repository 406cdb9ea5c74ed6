// libFuzzer target: requests to `attn serve` read the way the server reads them, without a socket.
// The input is the raw bytes of one HTTP request (request line, headers, body); cpp-httplib's own
// server parser reads it (Server::process_request over an in-memory stream, with the service's body
// limit and its pre-routing guard against unbounded bodies), and the routes that take a body hand
// it to the readers the service uses (serve/http_request.h, libre_translate.h, v1_request.h):
// LibreTranslate's POST /translate as JSON, URL-encoded or multipart form, POST /v1/translate and
// POST /v1/score as JSON, up to what the translation queue would be asked. No model is loaded.
//
// Checked besides memory errors: every refusal is an ApiError with a 4xx status, never another
// exception; an accepted request stays within the limits (texts, characters, beam, n-best), names
// a model that is served, and its texts are valid UTF-8; LibreTranslate's lines, joined again,
// give back each text (with "\r\n" as "\n").
#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"
#include "fuzz_support.h"
#include "serve/api_error.h"
#include "serve/http_request.h"
#include "serve/libre_translate.h"
#include "serve/request_fields.h"
#include "serve/v1_request.h"

namespace {

using attn::serve::ApiError;
using nlohmann::json;

// The request's bytes as the connection would deliver them; the reply is kept for the checks.
class MemoryStream : public httplib::Stream {
 public:
  explicit MemoryStream(std::string_view in) : in_(in) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, std::size_t size) override {
    const std::size_t n = std::min(size, in_.size());
    std::memcpy(ptr, in_.data(), n);
    in_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, std::size_t size) override {
    out.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 40000; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 8080; }
  socket_t socket() const override { return INVALID_SOCKET; }
  std::string out;

 private:
  std::string_view in_;
};

// A server whose request processing (protected in httplib) can be handed a stream.
class FuzzServer : public httplib::Server {
 public:
  bool process(httplib::Stream& stream) {
    bool closed = false;
    return process_request(stream, true, closed, nullptr);
  }
};

struct Served {
  std::vector<attn::serve::ModelSpec> specs;
  std::vector<attn::ModelConfig> configs;
  attn::serve::Limits limits;
  Served() {
    attn::serve::ModelSpec en_es;
    en_es.source = "en", en_es.target = "es", en_es.dir = "models/en-es";
    attn::serve::ModelSpec es_en = en_es;
    es_en.source = "es", es_en.target = "en", es_en.dir = "models/es-en";
    specs = {en_es, es_en};
    attn::ModelConfig config;
    config.encoder_layers = config.decoder_layers = 2;
    config.heads = 4;
    configs = {config, config};
    limits.max_texts = 16;
    limits.max_chars = 400;
    limits.max_body_bytes = 4096;
  }
};

const Served& served() {
  static const Served s;
  return s;
}

void check_texts(const std::vector<std::string>& texts) {
  const auto& limits = served().limits;
  FUZZ_CHECK(texts.size() <= static_cast<std::size_t>(limits.max_texts), std::to_string(texts.size()) + " texts");
  std::size_t chars = 0;
  for (const auto& t : texts) {
    FUZZ_CHECK(!attn::find_invalid_utf8(t), "a text that is not UTF-8 was accepted");
    chars += attn::serve::characters(t);
  }
  FUZZ_CHECK(chars <= static_cast<std::size_t>(limits.max_chars), std::to_string(chars) + " characters");
}

void check_model(int model) {
  FUZZ_CHECK(model >= 0 && static_cast<std::size_t>(model) < served().specs.size(), "model " + std::to_string(model));
}

void libre_translate(const httplib::Request& req, httplib::Response& res) {
  const json body = attn::serve::libre_body(req);
  (void)attn::serve::api_key_of(req, body);
  const auto r = attn::serve::read_libre_request(body, served().specs, served().limits);
  check_texts(r.texts);
  // source "auto": the model is chosen per text once its language is detected.
  if (r.detect)
    FUZZ_CHECK(r.model == -1, "model " + std::to_string(r.model) + " with source auto");
  else
    check_model(r.model);
  FUZZ_CHECK(r.format == "text" || r.format == "html", "format " + r.format);
  FUZZ_CHECK(r.alternatives >= 0, "alternatives " + std::to_string(r.alternatives));
  const auto lines = attn::serve::split_lines(r.texts);
  FUZZ_CHECK(lines.first_line.size() == r.texts.size() + 1 && lines.first_line.back() == lines.lines.size(),
             "the lines' bounds do not cover the texts");
  for (std::size_t t = 0; t < r.texts.size(); ++t) {
    std::string joined;
    for (std::size_t l = lines.first_line[t]; l < lines.first_line[t + 1]; ++l)
      joined += (l == lines.first_line[t] ? "" : "\n") + lines.lines[l];
    std::string expected;  // the text with "\r\n" as "\n"
    for (std::size_t i = 0; i < r.texts[t].size(); ++i)
      if (!(r.texts[t][i] == '\r' && i + 1 < r.texts[t].size() && r.texts[t][i + 1] == '\n')) expected += r.texts[t][i];
    FUZZ_CHECK(joined == expected, "text " + std::to_string(t) + " does not come back from its lines");
  }
  res.set_content("{}", "application/json");
}

void v1_translate(const httplib::Request& req, httplib::Response& res) {
  const json body = attn::serve::json_body(req, "Invalid request: the body is not JSON");
  (void)attn::serve::api_key_of(req, body);
  const auto r = attn::serve::read_translate_request(body, served().specs, served().configs, served().limits);
  check_texts(r.texts);
  check_model(r.model);
  for (const auto& t : r.texts) FUZZ_CHECK(t.find('\n') == std::string::npos, "a text of several lines");
  const auto& s = r.job.search;
  FUZZ_CHECK(s.beam_size >= 1 && s.beam_size <= attn::kMaxBeam, "beam " + std::to_string(s.beam_size));
  FUZZ_CHECK(s.n_best >= 1 && s.n_best <= s.beam_size, "n_best " + std::to_string(s.n_best));
  res.set_content("{}", "application/json");
}

void v1_score(const httplib::Request& req, httplib::Response& res) {
  const json body = attn::serve::json_body(req, "Invalid request: the body is not JSON");
  (void)attn::serve::api_key_of(req, body);
  const auto r = attn::serve::read_score_request(body, served().specs, served().configs, served().limits);
  check_model(r.model);
  FUZZ_CHECK(r.sources.size() == r.targets.size(), "sources and targets differ in number");
  check_texts(r.sources);
  res.set_content("{}", "application/json");
}

// Each handler as the service's route table wraps it: an ApiError becomes its status.
httplib::Server::Handler guarded(void (*handle)(const httplib::Request&, httplib::Response&)) {
  return [handle](const httplib::Request& req, httplib::Response& res) {
    try {
      handle(req, res);
    } catch (const ApiError& e) {
      FUZZ_CHECK(e.status() >= 400 && e.status() < 500, "status " + std::to_string(e.status()) + ": " + e.what());
      res.status = e.status();
    } catch (const attn::Error& e) {
      FUZZ_CHECK(false, std::string("an attn::Error that is not an ApiError: ") + e.what());
    }
  };
}

FuzzServer& server() {
  static FuzzServer* s = [] {
    auto* server = new FuzzServer;
    server->set_payload_max_length(served().limits.max_body_bytes);
    server->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      if (auto refusal = attn::serve::unbounded_body(req)) {
        res.status = refusal->status();
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server->set_exception_handler([](const httplib::Request&, httplib::Response&, std::exception_ptr ep) {
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        FUZZ_CHECK(false, std::string("an exception escaped a route: ") + e.what());
      }
    });
    server->Post("/translate", guarded(libre_translate));
    server->Post("/v1/translate", guarded(v1_translate));
    server->Post("/v1/score", guarded(v1_score));
    return server;
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  MemoryStream stream({reinterpret_cast<const char*>(data), size});
  server().process(stream);
  // Whatever came in, one reply went out with a status line.
  FUZZ_CHECK(stream.out.empty() || stream.out.rfind("HTTP/1.1 ", 0) == 0, "a reply without a status line");
  return 0;
}
