#include "serve/http_reply.h"

#include <httplib.h>

namespace attn::serve {

using nlohmann::json;

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", message}});
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

std::string unrouted_error_message(int status, const std::string& method, const std::string& path,
                                   std::size_t max_body_bytes) {
  if (status == 404) return "Not Found: no such path " + path;
  if (status == 413)
    return "Request Entity Too Large: the body is larger than " + std::to_string(max_body_bytes) + " bytes";
  if (status == 405) return "Method Not Allowed: " + method + " " + path;
  return reason(status);
}

}  // namespace attn::serve
