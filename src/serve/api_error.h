#pragma once
// An error a request gets as `{"error": message}` with an HTTP status.
#include <stdexcept>
#include <string>

namespace attn::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

}  // namespace attn::serve
