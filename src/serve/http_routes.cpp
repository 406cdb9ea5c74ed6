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

void detect(RouteContext& c, const Request& req, Response& res) {
  const json body = libre_body(req);
  check_key(c, req, body);
  send_json(res, 200, c.service.detect(body));
}

// LibreTranslate's form: the file in "file" (with its name), source and target beside it.
void translate_file(RouteContext& c, const Request& req, Response& res) {
  if (!req.is_multipart_form_data()) throw ApiError(400, "Invalid request: send the file as multipart/form-data");
  if (!req.has_file("file")) throw ApiError(400, "Invalid request: missing file parameter");
  json fields = json::object();
  for (const char* key : {"source", "target", "api_key"}) {
    if (req.has_file(key))
      fields[key] = req.get_file_value(key).content;
    else if (req.has_param(key))
      fields[key] = req.get_param_value(key);
  }
  check_key(c, req, fields);
  const auto& file = req.get_file_value("file");
  const std::string host = req.get_header_value("Host");
  const std::string root = "http://" + (host.empty() ? std::string("127.0.0.1") : host) + "/";
  send_json(res, 200, c.service.translate_file(file.content, file.filename, fields, root));
}

std::string content_type_of(const std::string& name) {
  const auto ends = [&](const char* e) {
    const std::string x = e;
    return name.size() >= x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0;
  };
  if (ends(".html") || ends(".htm")) return "text/html; charset=utf-8";
  if (ends(".md")) return "text/markdown; charset=utf-8";
  if (ends(".txt")) return "text/plain; charset=utf-8";
  if (ends(".docx")) return "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
  if (ends(".odt")) return "application/vnd.oasis.opendocument.text";
  return "application/octet-stream";
}

void download_file(RouteContext& c, const Request& req, Response& res) {
  const std::string name = req.matches.size() > 1 ? req.matches[1].str() : "";
  const std::string bytes = c.service.download_file(name);
  // The upload's own name, without the random part before it.
  res.set_header("Content-Disposition", "attachment; filename=\"" + name.substr(name.find('.') + 1) + "\"");
  res.set_content(bytes, content_type_of(name));
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
                                        {true, "/detect", detect},
                                        {true, "/translate_file", translate_file},
                                        {false, "/download_file", download_file, R"(/download_file/([^/]+))"},
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
  if (path.rfind("/download_file/", 0) == 0) return "/download_file";
  return known ? path : "other";
}

}  // namespace attn::serve
