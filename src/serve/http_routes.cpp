#include "serve/http_routes.h"

#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "serve/api_error.h"
#include "serve/http_reply.h"
#include "serve/http_request.h"
#include "serve/service.h"
#include "serve/web_page.h"

namespace attn::serve {

using nlohmann::json;

namespace {

using Request = httplib::Request;
using Response = httplib::Response;

// Throws the ApiError of a missing (400) or wrong (403) key when the service requires keys.
void check_key(RouteContext& c, const Request& req, const json& body) {
  const std::optional<std::string> key = api_key_of(req, body);
  c.service.check_api_key(key ? &*key : nullptr);
}

void libre_translate(RouteContext& c, const Request& req, Response& res) {
  const json body = libre_body(req);
  check_key(c, req, body);
  send_json(res, 200, c.service.libre_translate(body));
}

void languages(RouteContext& c, const Request&, Response& res) { send_json(res, 200, c.service.languages()); }

void frontend_settings(RouteContext& c, const Request&, Response& res) {
  send_json(res, 200, c.service.frontend_settings());
}

void v1_translate(RouteContext& c, const Request& req, Response& res) {
  const json body = json_body(req, "Invalid request: the body is not JSON");
  check_key(c, req, body);
  send_json(res, 200, c.service.translate(body));
}

void v1_score(RouteContext& c, const Request& req, Response& res) {
  const json body = json_body(req, "Invalid request: the body is not JSON");
  check_key(c, req, body);
  send_json(res, 200, c.service.score(body));
}

void v1_models(RouteContext& c, const Request&, Response& res) { send_json(res, 200, c.service.models()); }

void health(RouteContext& c, const Request&, Response& res) {
  send_json(res, c.service.draining() ? 503 : 200, c.service.health());
}

void metrics(RouteContext& c, const Request&, Response& res) {
  // The gauge counts the other requests: this scrape is not one of them.
  res.set_content(c.service.metrics().text(c.service.queued_sentences(), c.in_flight.load() - 1),
                  "text/plain; version=0.0.4; charset=utf-8");
}

std::string read_page(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ApiError(500, "cannot read the page " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The built-in page, or the file --page names, read at every request (to work on the page).
void page(RouteContext& c, const Request&, Response& res) {
  const std::string& file = c.service.options().page_file;
  res.set_content(file.empty() ? std::string(web_page()) : read_page(file), "text/html; charset=utf-8");
}

}  // namespace

const std::vector<Route>& routes() {
  static const std::vector<Route> table{{true, "/translate", libre_translate},
                                        {false, "/languages", languages},
                                        {false, "/frontend/settings", frontend_settings},
                                        {true, "/v1/translate", v1_translate},
                                        {true, "/v1/score", v1_score},
                                        {false, "/v1/models", v1_models},
                                        {false, "/health", health},
                                        {false, "/metrics", metrics},
                                        {false, "/", page}};
  return table;
}

std::string metric_path(const std::string& path) {
  const auto& table = routes();
  const bool known = std::any_of(table.begin(), table.end(), [&](const Route& r) { return path == r.path; });
  return known ? path : "other";
}

}  // namespace attn::serve
