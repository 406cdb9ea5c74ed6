#pragma once
// Plain text in, plain text out: each paragraph (lines between blank lines) a segment, the blank
// lines, the indentation before a paragraph and the whitespace after it kept as they are.
#include <string>

#include "document/document.h"

namespace attn::document {

// Throws Error for text that is not text: invalid UTF-8 (naming the byte offset) or NUL bytes.
// `lines`: every line is a paragraph of its own, as LibreTranslate reads a text (its engine translates
// line by line); otherwise a line that goes on in lower case may continue the sentence before it.
Document read_text(const std::string& text, bool lines = false);

// Throws Error as read_text does: invalid UTF-8 at byte N, or a NUL byte ("binary data").
void check_text(const std::string& bytes, const std::string& what);

}  // namespace attn::document
