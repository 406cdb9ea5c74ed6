#pragma once
// The API's errors about what its caller gave: Error of kind invalid_argument (Python: ValueError).
#include <string>

#include "attn/error.h"

namespace attn::api {

[[noreturn]] inline void invalid(const std::string& message) { throw Error(message, ErrorKind::invalid_argument); }

// f(), its Errors re-kinded as invalid_argument: for calls whose every failure is about the values
// given (texts whose counts differ, ids out of range, options out of range).
template <class F>
decltype(auto) as_argument_error(F f) {
  try {
    return f();
  } catch (const Error& e) {
    invalid(e.what());
  }
}

}  // namespace attn::api
