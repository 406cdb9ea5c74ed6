#pragma once
// The HTTP face of a Service (cpp-httplib, Debian's libcpp-httplib): routes, JSON and form
// bodies, API keys, limits, CORS, the page, metrics per request, and a graceful stop. The routes
// are a table (http_routes.h); reading requests and writing replies live in http_request.h and
// http_reply.h.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "serve/service.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace attn::serve {

struct Route;

class HttpServer {
 public:
  explicit HttpServer(Service& service);
  ~HttpServer();

  // Binds (port 0: any free port) and returns the port; throws Error if it cannot.
  int bind(const std::string& host, int port);
  // Serves until stop(); returns once every request in flight has been answered.
  void serve();
  // Stops accepting connections; safe from any thread, before or during serve().
  void stop();

 private:
  void configure();   // threads, socket, timeouts, body limit, CORS headers
  void add_guards();  // bodies of unknown size, errors no route answered, exceptions
  void add_routes();
  // Every route: count it, time it, turn errors into JSON.
  void answer(const Route& route, const httplib::Request& req, httplib::Response& res);

  Service& service_;
  std::unique_ptr<httplib::Server> server_;
  int listen_socket_ = -1;
  std::atomic<int> in_flight_{0};  // requests being answered
};

}  // namespace attn::serve
