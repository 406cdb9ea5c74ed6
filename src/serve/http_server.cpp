#include "serve/http_server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/utf8.h"
#include "serve/api_error.h"
#include "serve/web_page.h"

namespace attn::serve {

using nlohmann::json;

namespace {

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", message}});
}

bool is_json(const httplib::Request& req) {
  return req.get_header_value("Content-Type").find("application/json") != std::string::npos;
}

// JSON nested deeper than this is refused: copying or printing a value recurses.
constexpr int kMaxJsonDepth = 32;

// The body as JSON (whatever its Content-Type, for /v1), or 400.
json parse_body(const httplib::Request& req, const char* invalid_json) {
  if (auto bad = find_invalid_utf8(req.body))
    throw ApiError(400, "Invalid request: the body is not valid UTF-8 (byte " + std::to_string(*bad + 1) + ")");
  const json::parser_callback_t depth = [&](int level, json::parse_event_t, json&) {
    if (level > kMaxJsonDepth)
      throw ApiError(400,
                     std::string(invalid_json) + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  };
  try {
    return json::parse(req.body, depth);
  } catch (const json::exception& e) {  // syntax, and numbers out of range (1e999)
    throw ApiError(400, std::string(invalid_json) + ": " + e.what());
  }
}

// LibreTranslate's /translate reads JSON when the Content-Type says so, a form otherwise.
json libre_request(const httplib::Request& req) {
  if (is_json(req)) return parse_body(req, "Invalid JSON format");
  json out = json::object();
  for (const char* key : {"q", "source", "target", "format", "api_key", "alternatives"}) {
    std::string value;
    if (req.has_param(key))
      value = req.get_param_value(key);
    else if (req.has_file(key))
      value = req.get_file_value(key).content;
    else
      continue;
    if (std::string(key) == "alternatives") {
      try {
        std::size_t used = 0;
        const int n = std::stoi(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
        out[key] = n;
      } catch (const std::exception&) {
        throw ApiError(400, "Invalid request: alternatives must be an integer (got \"" + value + "\")");
      }
      continue;
    }
    // A form's text, like LibreTranslate's: line endings normalised to "\n".
    std::string normalised;
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i] == '\r') {
        normalised += '\n';
        if (i + 1 < value.size() && value[i + 1] == '\n') ++i;
      } else {
        normalised += value[i];
      }
    }
    out[key] = normalised;
  }
  return out;
}

const std::string* api_key_of(const httplib::Request& req, const json& body, std::string& holder) {
  if (body.is_object() && body.contains("api_key") && body["api_key"].is_string()) {
    holder = body["api_key"].get<std::string>();
    return &holder;
  }
  const std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0) {
    holder = auth.substr(7);
    return &holder;
  }
  if (req.has_header("X-API-Key")) {
    holder = req.get_header_value("X-API-Key");
    return &holder;
  }
  return nullptr;
}

// Paths as the metrics label them (unknown paths share one label).
std::string metric_path(const std::string& path) {
  static const std::set<std::string> known{"/",          "/translate", "/languages", "/v1/translate",     "/v1/score",
                                           "/v1/models", "/health",    "/metrics",   "/frontend/settings"};
  return known.count(path) ? path : "other";
}

std::string reason(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Request Entity Too Large";
    case 414:
      return "URI Too Long";
    case 416:
      return "Range Not Satisfiable";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Internal Server Error" : "HTTP error " + std::to_string(status);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ApiError(500, "cannot read the page " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

HttpServer::HttpServer(Service& service) : service_(service), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  const ServeOptions& o = service_.options();
  const int threads = o.http_threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  // httplib listens with a backlog of 5: a burst of clients connecting at once would have their
  // connections dropped and retried a second later. Keep the socket to listen again, deeper.
  s.set_socket_options([this](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_socket_ = sock;
  });
  s.set_payload_max_length(o.limits.max_body_bytes);
  s.set_read_timeout(o.limits.read_timeout_seconds, 0);
  s.set_write_timeout(o.limits.read_timeout_seconds, 0);
  s.set_keep_alive_timeout(o.limits.read_timeout_seconds);
  s.set_default_headers({{"Access-Control-Allow-Origin", "*"},
                         {"Access-Control-Allow-Headers", "Authorization, Content-Type, X-API-Key"},
                         {"Access-Control-Allow-Methods", "GET, POST"}});

  // The body limit is checked against Content-Length: a body without one (chunked) or compressed
  // (httplib would inflate gzip and brotli) could outgrow it, so neither is taken.
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "POST") return httplib::Server::HandlerResponse::Unhandled;
    const std::string encoding = req.get_header_value("Content-Encoding");
    if (!encoding.empty() && encoding != "identity") {
      send_error(res, 415,
                 "Unsupported Media Type: Content-Encoding " + encoding + " is not accepted; send the body as is");
    } else if (!req.has_header("Content-Length")) {
      send_error(res, 411, "Length Required: send the body with a Content-Length (not chunked)");
    } else {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    service_.metrics().request(metric_path(req.path), res.status, 0);
    return httplib::Server::HandlerResponse::Handled;
  });

  // Errors that no handler answered (404, 413, a malformed request): JSON like every other.
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message = reason(res.status);
    if (res.status == 404) message = "Not Found: no such path " + req.path;
    if (res.status == 413)
      message = "Request Entity Too Large: the body is larger than " +
                std::to_string(service_.options().limits.max_body_bytes) + " bytes";
    if (res.status == 405) message = "Method Not Allowed: " + req.method + " " + req.path;
    send_error(res, res.status, message);
    service_.metrics().request(metric_path(req.path), res.status, 0);
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string message = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
    send_error(res, 500, "Internal error: " + message);
  });

  // Every route: count it, time it, turn errors into JSON.
  using Body = std::function<void(const httplib::Request&, httplib::Response&)>;
  const auto route = [this](const std::string& path, Body body) {
    return [this, path, body](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = std::chrono::steady_clock::now();
      ++in_flight_;
      try {
        body(req, res);
      } catch (const ApiError& e) {
        send_error(res, e.status(), e.what());
      } catch (const std::exception& e) {
        send_error(res, 500, std::string("Cannot translate text: ") + e.what());
      }
      --in_flight_;
      service_.metrics().request(path, res.status,
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
  };
  const auto keyed = [this](const httplib::Request& req, const json& body) {
    std::string key;
    service_.check_api_key(api_key_of(req, body, key));
  };

  s.Post("/translate", route("/translate", [this, keyed](const httplib::Request& req, httplib::Response& res) {
           const json body = libre_request(req);
           keyed(req, body);
           send_json(res, 200, service_.libre_translate(body));
         }));
  s.Get("/languages", route("/languages", [this](const httplib::Request&, httplib::Response& res) {
          send_json(res, 200, service_.languages());
        }));
  s.Get("/frontend/settings", route("/frontend/settings", [this](const httplib::Request&, httplib::Response& res) {
          send_json(res, 200, service_.frontend_settings());
        }));
  s.Post("/v1/translate", route("/v1/translate", [this, keyed](const httplib::Request& req, httplib::Response& res) {
           const json body = parse_body(req, "Invalid request: the body is not JSON");
           keyed(req, body);
           send_json(res, 200, service_.translate(body));
         }));
  s.Post("/v1/score", route("/v1/score", [this, keyed](const httplib::Request& req, httplib::Response& res) {
           const json body = parse_body(req, "Invalid request: the body is not JSON");
           keyed(req, body);
           send_json(res, 200, service_.score(body));
         }));
  s.Get("/v1/models", route("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
          send_json(res, 200, service_.models());
        }));
  s.Get("/health", route("/health", [this](const httplib::Request&, httplib::Response& res) {
          send_json(res, service_.draining() ? 503 : 200, service_.health());
        }));
  s.Get("/metrics", route("/metrics", [this](const httplib::Request&, httplib::Response& res) {
          // The gauge counts the other requests: this scrape is not one of them.
          res.set_content(service_.metrics().text(service_.queued_sentences(), in_flight_.load() - 1),
                          "text/plain; version=0.0.4; charset=utf-8");
        }));
  s.Get("/", route("/", [this](const httplib::Request&, httplib::Response& res) {
          const std::string& file = service_.options().page_file;
          res.set_content(file.empty() ? std::string(web_page()) : read_file(file), "text/html; charset=utf-8");
        }));
  // Browsers ask before a cross-origin POST with a JSON body.
  s.Options(R"(.*)", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
}

HttpServer::~HttpServer() = default;

int HttpServer::bind(const std::string& host, int port) {
  int bound = port;
  if (port == 0) {
    bound = server_->bind_to_any_port(host);
    if (bound <= 0) throw Error("cannot listen on " + host + " (any port)");
  } else if (!server_->bind_to_port(host, port)) {
    throw Error("cannot listen on " + host + ":" + std::to_string(port) + " (in use?)");
  }
  if (listen_socket_ >= 0) ::listen(listen_socket_, SOMAXCONN);  // Linux: listening again sets the backlog
  return bound;
}

void HttpServer::serve() { server_->listen_after_bind(); }

void HttpServer::stop() { server_->stop(); }

}  // namespace attn::serve
