#include "serve/http_request.h"

#include <httplib.h>

#include "core/utf8.h"

namespace attn::serve {

using nlohmann::json;

namespace {

// A form's "alternatives": the whole value an integer.
int form_integer(const std::string& value) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(value, &used);
    if (used != value.size()) throw std::invalid_argument(value);
    return n;
  } catch (const std::exception&) {
    throw ApiError(400, "Invalid request: alternatives must be an integer (got \"" + value + "\")");
  }
}

// "\r\n" and a lone "\r" become "\n".
std::string normalise_line_endings(const std::string& value) {
  std::string normalised;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\r') {
      normalised += '\n';
      if (i + 1 < value.size() && value[i + 1] == '\n') ++i;
    } else {
      normalised += value[i];
    }
  }
  return normalised;
}

}  // namespace

json json_body(const httplib::Request& req, const char* invalid_json) {
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

json libre_body(const httplib::Request& req) {
  if (req.get_header_value("Content-Type").find("application/json") != std::string::npos)
    return json_body(req, "Invalid JSON format");
  json out = json::object();
  for (const char* key : {"q", "source", "target", "format", "api_key", "alternatives"}) {
    std::string value;
    if (req.has_param(key))
      value = req.get_param_value(key);
    else if (req.has_file(key))
      value = req.get_file_value(key).content;
    else
      continue;
    if (std::string(key) == "alternatives")
      out[key] = form_integer(value);
    else
      out[key] = normalise_line_endings(value);
  }
  return out;
}

std::optional<std::string> api_key_of(const httplib::Request& req, const json& body) {
  if (body.is_object() && body.contains("api_key") && body["api_key"].is_string())
    return body["api_key"].get<std::string>();
  const std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0) return auth.substr(7);
  if (req.has_header("X-API-Key")) return req.get_header_value("X-API-Key");
  return std::nullopt;
}

std::optional<ApiError> unbounded_body(const httplib::Request& req) {
  if (req.method != "POST") return std::nullopt;
  const std::string encoding = req.get_header_value("Content-Encoding");
  if (!encoding.empty() && encoding != "identity")
    return ApiError(415,
                    "Unsupported Media Type: Content-Encoding " + encoding + " is not accepted; send the body as is");
  if (!req.has_header("Content-Length"))
    return ApiError(411, "Length Required: send the body with a Content-Length (not chunked)");
  return std::nullopt;
}

}  // namespace attn::serve
