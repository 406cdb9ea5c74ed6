#pragma once
// How many times `part` occurs in `text`, counting occurrences that do not overlap (as a reader
// counts words in a log or elements in an SVG).
#include <string>
#include <string_view>

namespace attn::testing {

inline int count_of(std::string_view text, std::string_view part) {
  if (part.empty()) return 0;
  int n = 0;
  for (auto at = text.find(part); at != std::string_view::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

}  // namespace attn::testing
