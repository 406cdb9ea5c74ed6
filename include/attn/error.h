#pragma once
// attn's one exception type. Every message about an input names the file (and line or key) and
// the problem: the same text the command line prints after "error: ". Its kind says whose the
// problem is, for bindings that raise different exceptions (Python: ValueError,
// FileNotFoundError, RuntimeError).
#include <stdexcept>
#include <string>

namespace attn {

enum class ErrorKind {
  other,             // anything else: a file that is not what it should be, a failure while working
  invalid_argument,  // a value the caller gave is out of range or of the wrong kind
  not_found,         // a file or folder that is not there
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::other) : std::runtime_error(what), kind_(kind) {}
  explicit Error(const char* what, ErrorKind kind = ErrorKind::other) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace attn
