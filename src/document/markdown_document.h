#pragma once
// Markdown in, Markdown out (CommonMark's common forms): the text of each paragraph, heading, list
// item, block quote line and table cell translated, the syntax around it kept as it was.
#include <string>

#include "document/document.h"

namespace attn::document {

// Reads `markdown` into a document:
// - pieces, kept as they are: block syntax (# headings, list markers and their indentation, > quote
//   markers, | table | pipes | and the delimiter row, thematic breaks, front matter between --- lines),
//   fenced (``` or ~~~) and indented code blocks, HTML blocks, link reference definitions, blank lines;
// - segments: the inline text of each block (a paragraph's lines joined as one segment, its line
//   breaks kept in the text);
// - spans: emphasis and strong (*x*, _x_, **x**, __x__), strikethrough (~~x~~) and links ([text](url
//   "title"), where the text is translated and the rest is the span's open/close) as elements; code
//   spans (`x`), autolinks (<https://…>), images (![alt](src)), inline HTML tags and hard line breaks
//   (two spaces or a backslash before a line break) as empty elements, kept as they are;
// - escape: Escape::none (backslash escapes in the source stay in the pieces and spans).
// Throws Error for invalid UTF-8 (naming the byte offset) or NUL bytes.
Document read_markdown(const std::string& markdown);

}  // namespace attn::document
