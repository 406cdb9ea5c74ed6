#pragma once
// A float as the double with the same shortest decimal text: 0.1f is written to JSON as 0.1, not
// 0.10000000149011612, and reads back as the same float.
#include <charconv>
#include <string>

namespace attn {

inline double float_decimal(float f) {
  char buf[32];
  const char* end = std::to_chars(buf, buf + sizeof buf, f).ptr;
  double d = 0;
  std::from_chars(buf, end, d);
  return d;
}

}  // namespace attn
