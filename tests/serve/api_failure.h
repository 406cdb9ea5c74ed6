#pragma once
// The ApiError an action throws, as "STATUS message", for tests of the service's parts that run
// without HTTP; "(no error)" when it throws none.
#include <functional>
#include <string>

#include "serve/api_error.h"

namespace attn::serve::testing {

inline std::string failure_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ApiError& e) {
    return std::to_string(e.status()) + " " + e.what();
  }
  return "(no error)";
}

}  // namespace attn::serve::testing
