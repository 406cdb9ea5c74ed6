#pragma once
// A duration as H:MM:SS (rounded to the second), as the training log and the report print it.
#include <cstdio>
#include <string>

namespace attn {

inline std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

}  // namespace attn
