#include "core/utf8.h"

namespace attn {

DecodedCodePoint decode_utf8_at(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return {lead, 1, true};
  constexpr DecodedCodePoint invalid{U'\uFFFD', 1, false};
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
    return invalid;
  }
  if (pos + form.length > text.size()) return invalid;
  char32_t code_point = lead & form.payload_mask;
  for (std::size_t i = 1; i < form.length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return invalid;
    code_point = (code_point << 6) | (byte(pos + i) & 0x3F);
  }
  if (code_point < form.minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
    return invalid;
  return {code_point, form.length, true};
}

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const DecodedCodePoint d = decode_utf8_at(text, i);
    if (!d.valid) return i;
    i += d.length;
  }
  return std::nullopt;
}

void append_utf8(std::string& out, char32_t code_point) {
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

}  // namespace attn
