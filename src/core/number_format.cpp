#include "core/number_format.h"

#include <charconv>

#include "core/error.h"

namespace attn {

std::string format_fixed(double value, int decimals) {
  char buffer[400];  // enough for any double in fixed notation with a sane number of decimals
  ATTN_CHECK(decimals >= 0 && decimals <= 60, "format_fixed: decimals out of range");
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  ATTN_CHECK(result.ec == std::errc(), "format_fixed: number does not fit");
  return std::string(buffer, result.ptr);
}

}  // namespace attn
