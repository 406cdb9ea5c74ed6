#pragma once
// The routes `attn serve` answers, as a table: method, path (also the label its requests are
// counted under in /metrics) and a handler that writes the reply or throws ApiError. HttpServer
// wraps each handler to count and time it and to turn its errors into JSON.
#include <atomic>
#include <string>
#include <vector>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace attn::serve {

class Service;

// What a handler may use: the service, and the count of requests being answered (this one too).
struct RouteContext {
  Service& service;
  const std::atomic<int>& in_flight;
};

using RouteHandler = void (*)(RouteContext&, const httplib::Request&, httplib::Response&);

struct Route {
  bool post;  // POST, else GET
  const char* path;
  RouteHandler handle;
  const char* pattern = nullptr;  // a regular expression the path must match, where it is not `path` itself
};

// Every route, in the order they are registered.
const std::vector<Route>& routes();

// Paths as the metrics label them: a route's own path; unknown paths share the label "other".
std::string metric_path(const std::string& path);

}  // namespace attn::serve
