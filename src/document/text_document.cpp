#include "document/text_document.h"

#include "core/error.h"
#include "core/utf8.h"

namespace attn::document {

void check_text(const std::string& bytes, const std::string& what) {
  if (const auto bad = find_invalid_utf8(bytes))
    throw Error(what + ": not UTF-8 text (invalid byte at offset " + std::to_string(*bad) + ")");
  if (const auto nul = bytes.find('\0'); nul != std::string::npos)
    throw Error(what + ": binary data, not text (a NUL byte at offset " + std::to_string(nul) + ")");
}

Document read_text(const std::string& text, bool lines) {
  check_text(text, "the text");
  Document d;
  d.format = "text";
  d.escape = Escape::none;
  const auto blank_line_at = [&](std::size_t line_start) {  // the line from line_start holds only spaces
    std::size_t i = line_start;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    return i == text.size() || text[i] == '\n';
  };
  std::string literal;
  std::size_t i = 0;
  while (i < text.size()) {
    // Blank lines and a paragraph's indentation: literal.
    std::size_t start = i;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
    literal += text.substr(start, i - start);
    if (i == text.size()) break;
    // The paragraph: up to a line break followed by a blank line, or the end.
    std::size_t end = i;
    while (end < text.size()) {
      const std::size_t nl = text.find('\n', end);
      if (nl == std::string::npos) {
        end = text.size();
        break;
      }
      end = nl + 1;
      if (lines || blank_line_at(end)) {
        end = nl;
        break;
      }
    }
    std::size_t last = end;  // trailing whitespace of the paragraph goes with the literal after it
    while (last > i &&
           (text[last - 1] == ' ' || text[last - 1] == '\t' || text[last - 1] == '\r' || text[last - 1] == '\n'))
      --last;
    d.pieces.push_back({literal, -1});
    literal.clear();
    d.pieces.push_back({"", static_cast<int>(d.segments.size())});
    Segment s;
    s.text = text.substr(i, last - i);
    d.segments.push_back(std::move(s));
    i = last;
  }
  if (!literal.empty()) d.pieces.push_back({literal, -1});
  return d;
}

}  // namespace attn::document
