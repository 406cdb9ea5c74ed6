#pragma once
// Stepping through UTF-8 one code point at a time.
#include <cstddef>
#include <string>
#include <string_view>

namespace attn::eval {

struct DecodedCodePoint {
  char32_t code_point;
  std::size_t length;  // bytes, 1 to 4
};

// Decodes the code point starting at text[pos] (pos < text.size()). A byte that does not start a
// complete, well-formed sequence decodes on its own as U+FFFD with length 1, so that any input
// can be walked without running off the end.
inline DecodedCodePoint decode_utf8_at(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return {lead, 1};
  struct Form {
    std::size_t length;
    unsigned char payload_mask;
    char32_t minimum;  // smaller values are overlong encodings
  };
  Form form{};
  if ((lead & 0xE0) == 0xC0) {
    form = {2, 0x1F, 0x80};
  } else if ((lead & 0xF0) == 0xE0) {
    form = {3, 0x0F, 0x800};
  } else if ((lead & 0xF8) == 0xF0) {
    form = {4, 0x07, 0x10000};
  } else {
    return {U'\uFFFD', 1};
  }
  const std::size_t length = form.length;
  char32_t code_point = lead & form.payload_mask;
  if (pos + length > text.size()) return {U'\uFFFD', 1};
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return {U'\uFFFD', 1};
    code_point = (code_point << 6) | (byte(pos + i) & 0x3F);
  }
  if (code_point < form.minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return {U'\uFFFD', 1};
  }
  return {code_point, length};
}

inline void append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

}  // namespace attn::eval
