#include "core/xml_escape.h"

namespace attn {

std::string xml_escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += quotes ? "&quot;" : "\"";
        break;
      case '\'':
        out += quotes ? "&apos;" : "'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace attn
