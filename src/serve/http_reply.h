#pragma once
// Writing replies: JSON bodies, `{"error": message}` errors, and the messages of the errors that
// httplib meets before any route (an unknown path, a body over the limit, a malformed request).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace httplib {
struct Response;
}

namespace attn::serve {

void send_json(httplib::Response& res, int status, const nlohmann::json& body);
void send_error(httplib::Response& res, int status, const std::string& message);

// The reason phrase of an error status ("Not Found"); 5xx without one of its own is an internal
// error, other codes are named by number.
std::string reason(int status);

// What an error that no route answered says: the reason, and for 404, 405 and 413 what was asked
// (`method` and `path`) or the limit (`max_body_bytes`).
std::string unrouted_error_message(int status, const std::string& method, const std::string& path,
                                   std::size_t max_body_bytes);

}  // namespace attn::serve
