#pragma once
// HTML in, HTML out: a page or a fragment parsed by an HTML5 parser (Gumbo), each block's text to
// translate with its inline markup as spans, everything else kept byte for byte.
#include <string>

#include "document/document.h"

namespace attn::document {

// Reads `html` (a whole page or a fragment such as "<b>Hello</b> world") into a document:
// - segments: the text of each block (p, li, td, th, h1-h6, dt, dd, caption, figcaption, blockquote,
//   title, option, label, button, summary, legend, div and body where they hold text directly, …),
//   one segment per run of inline content; entities decoded in the segment's text; runs of
//   whitespace in the source text are kept in the text as they are (the translation decides);
// - spans: inline elements (a, abbr, b, bdi, bdo, cite, code, data, dfn, em, font, i, kbd, mark, q, s,
//   samp, small, span, strong, sub, sup, time, u, var, …) as elements whose open and close are the
//   source's own start and end tags (attributes untouched); void inline elements (br, img, wbr,
//   input) and inline comments as empty elements; a start tag without an end tag in the source gets a
//   synthesized one ("</b>") and a warning;
// - pieces: everything else as it is in the source, byte for byte: the markup, attributes, comments,
//   the doctype, entities outside translated text, the content of script, style, pre, code (as a
//   block), textarea, svg and math, and of every element with translate="no" or class="notranslate";
// - escape: Escape::html.
// Malformed markup is read the HTML5 way (as a browser would) and each repair is a warning with its
// line and column ("line 3, column 5: unclosed <b>, closed at the end of its block"). Throws Error
// for text that is not HTML: invalid UTF-8 (naming the byte offset) or NUL bytes.
Document read_html(const std::string& html);

}  // namespace attn::document
