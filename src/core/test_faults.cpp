#include "core/test_faults.h"

#include <cstdlib>
#include <string>

namespace attn {

bool test_fault(std::string_view name) {
  static const std::string faults = [] {
    const char* v = std::getenv("ATTN_TEST_FAULTS");
    return "," + std::string(v ? v : "") + ",";
  }();
  return faults.find("," + std::string(name) + ",") != std::string::npos;
}

}  // namespace attn
