#pragma once
// The HTTP face of a Service (cpp-httplib, Debian's libcpp-httplib): routes, JSON and form
// bodies, API keys, limits, CORS, the page, metrics per request, and a graceful stop.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "serve/service.h"

namespace httplib {
class Server;
}

namespace attn::serve {

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
  Service& service_;
  std::unique_ptr<httplib::Server> server_;
  int listen_socket_ = -1;
  std::atomic<int> in_flight_{0};  // requests being answered
};

}  // namespace attn::serve
