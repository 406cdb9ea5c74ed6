#pragma once
// A float as the double with the same shortest decimal text: 0.1f is written to JSON as 0.1, not
// 0.10000000149011612, and reads back as the same float.
#include <charconv>
#include <cstdlib>
#include <string>

namespace attn {

inline double float_decimal(float f) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf - 1, f).ptr;
  *end = '\0';
  return std::strtod(buf, nullptr);
}

}  // namespace attn
