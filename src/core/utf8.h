#pragma once
// UTF-8, the one decoder and encoder of the project: validation of input text, stepping through
// text one code point at a time (BLEU's and chrF's tokenisation, lower-casing, the OSIS cleaner's
// spacing), and appending a code point.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace attn {

struct DecodedCodePoint {
  char32_t code_point;
  std::size_t length;  // bytes, 1 to 4
  bool valid;          // false: text[pos] does not start a well-formed sequence (code_point is U+FFFD)
};

// Decodes the code point starting at text[pos] (pos < text.size()). A byte that does not start a
// complete, well-formed sequence (overlong forms, surrogates and code points above U+10FFFF are
// not) decodes on its own as U+FFFD with length 1, so that any input can be walked without running
// off the end.
DecodedCodePoint decode_utf8_at(std::string_view text, std::size_t pos);

// Returns the byte offset of the first invalid UTF-8 sequence, or nullopt if the whole text is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF).
void append_utf8(std::string& out, char32_t code_point);

}  // namespace attn
