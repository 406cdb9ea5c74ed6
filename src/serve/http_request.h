#pragma once
// Reading an HTTP request into what the Service takes: the body as JSON (or LibreTranslate's
// form), the API key wherever the client put it, and the refusal of bodies whose size is unknown.
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "serve/api_error.h"

namespace httplib {
struct Request;
}

namespace attn::serve {

// JSON nested deeper than this is refused: copying or printing a value recurses.
constexpr int kMaxJsonDepth = 32;

// The body as JSON whatever its Content-Type (as /v1 reads it); ApiError 400 for a body that is
// not valid UTF-8, too deep, or not JSON, the last two worded `invalid_json` + ": " + why.
nlohmann::json json_body(const httplib::Request& req, const char* invalid_json);

// LibreTranslate's /translate reads JSON when the Content-Type says so, a form otherwise (URL-
// encoded or multipart): q, source, target, format and api_key as strings with line endings
// normalised to "\n" (as LibreTranslate does), alternatives as an integer.
nlohmann::json libre_body(const httplib::Request& req);

// The API key: the body's "api_key", else "Authorization: Bearer KEY", else "X-API-Key".
std::optional<std::string> api_key_of(const httplib::Request& req, const nlohmann::json& body);

// The body limit is checked against Content-Length: a POST body without one (chunked) or
// compressed (httplib would inflate gzip and brotli) could outgrow it, so neither is taken:
// 411 and 415. Nothing for any other request.
std::optional<ApiError> unbounded_body(const httplib::Request& req);

}  // namespace attn::serve
