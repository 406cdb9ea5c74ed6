#include "serve/http_server.h"

#include <httplib.h>

#include <atomic>
#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "serve/api_error.h"
#include "serve/http_reply.h"
#include "serve/http_request.h"
#include "serve/http_routes.h"

namespace attn::serve {

HttpServer::HttpServer(Service& service) : service_(service), server_(std::make_unique<httplib::Server>()) {
  configure();
  add_guards();
  add_routes();
}

HttpServer::~HttpServer() = default;

void HttpServer::configure() {
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
  // Uploads to /translate_file may be larger than other bodies: answer() holds the others to
  // max_body_bytes once their body is read (refused before, a client still sending would find the
  // connection closed under it).
  s.set_payload_max_length(std::max(o.limits.max_body_bytes, o.limits.max_file_bytes + (1 << 20)));
  s.set_read_timeout(o.limits.read_timeout_seconds, 0);
  s.set_write_timeout(o.limits.read_timeout_seconds, 0);
  s.set_keep_alive_timeout(o.limits.read_timeout_seconds);
  s.set_default_headers({{"Access-Control-Allow-Origin", "*"},
                         {"Access-Control-Allow-Headers", "Authorization, Content-Type, X-API-Key"},
                         {"Access-Control-Allow-Methods", "GET, POST"}});
}

void HttpServer::add_guards() {
  using HandlerResponse = httplib::Server::HandlerResponse;
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::optional<ApiError> refusal = unbounded_body(req);
    if (!refusal) return HandlerResponse::Unhandled;
    send_error(res, refusal->status(), refusal->what());
    service_.metrics().request(metric_path(req.path), res.status, 0);
    return HandlerResponse::Handled;
  });
  // Errors that no handler answered (404, 413, a malformed request): JSON like every other.
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return HandlerResponse::Unhandled;
    send_error(res, res.status,
               unrouted_error_message(res.status, req.method, req.path, service_.options().limits.max_body_bytes));
    service_.metrics().request(metric_path(req.path), res.status, 0);
    return HandlerResponse::Handled;
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
}

void HttpServer::add_routes() {
  for (const Route& route : routes()) {
    const auto handler = [this, &route](const httplib::Request& req, httplib::Response& res) {
      answer(route, req, res);
    };
    const std::string pattern = route.pattern ? route.pattern : route.path;
    if (route.post)
      server_->Post(pattern, handler);
    else
      server_->Get(pattern, handler);
  }
  // Browsers ask before a cross-origin POST with a JSON body.
  server_->Options(R"(.*)", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
}

void HttpServer::answer(const Route& route, const httplib::Request& req, httplib::Response& res) {
  const auto t0 = std::chrono::steady_clock::now();
  ++in_flight_;
  try {
    const std::size_t limit = service_.options().limits.max_body_bytes;
    if (std::string_view(route.path) != "/translate_file" && req.body.size() > limit)
      throw ApiError(413, "Request Entity Too Large: the body is larger than " + std::to_string(limit) + " bytes");
    RouteContext context{service_, in_flight_};
    route.handle(context, req, res);
  } catch (const ApiError& e) {
    send_error(res, e.status(), e.what());
  } catch (const std::exception& e) {
    send_error(res, 500, std::string("Cannot translate text: ") + e.what());
  }
  --in_flight_;
  service_.metrics().request(route.path, res.status,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

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
