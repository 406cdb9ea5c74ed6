#pragma once
// What every format is read into and written back from: a document is literal pieces, kept byte
// for byte (markup, layout, whatever is not translated), and segments between them, each a block of
// text to translate with the inline markup that sits inside it as spans over the text.
//
//   <p>Let there be <b>light</b>.<br>Amen</p>   (HTML)
//   pieces:   "<p>", segment 0, "</p>"
//   segment:  text "Let there be light. Amen"
//             spans: element [13, 18) open "<b>" close "</b>"; empty_element at 19 "<br>"
//
// A reader (html_document.h, markdown_document.h, office_document.h, text_document.h) makes one; the
// translation (document_translation.h) splits each segment into sentences, translates them, places
// the spans on the translated words and writes each segment back in the format (render_segment).
#include <cstddef>
#include <string>
#include <vector>

namespace attn::document {

struct Span {
  enum class Kind {
    element,        // markup around [begin, end) of the text: `open` before, `close` after (<b>…</b>, a run)
    empty_element,  // markup at one position, begin == end: `open` alone (<br>, <img …>)
    text,           // text at one position, begin == end, that must come out unchanged and is never
                    // translated: `open` (a placeholder such as %1$s or {name}, a line break inside a
                    // sentence); escaped as the format's text when written
  };
  Kind kind = Kind::element;
  std::size_t begin = 0, end = 0;  // bytes of Segment::text
  std::string open, close;         // as written in the source (the reader keeps the original markup)
  int parent = -1;                 // the innermost element it sits in (an index into Segment::spans), -1: none
  // An empty element that separates the words on either side as a space would (<br>, <img>, a
  // .docx tab or break), where the text has no space: "Tab<w:tab/>here" is two words, not one.
  bool breaks_words = false;
};

// How a format's text is written: HTML and XML escape &, < and > (and HTML's non-breaking space
// stays a character); Markdown and plain text are written as they are.
enum class Escape { none, html, xml };
std::string escape_text(const std::string& text, Escape escape);

struct Segment {
  std::string text;  // plain UTF-8 text: no markup, entities decoded
  // A tree in document order (a parent before its children, siblings by position): each span inside
  // its parent's [begin, end], sibling elements not overlapping. Positions alone cannot say whether
  // <br> at the end of <b>…</b> is inside it: `parent` does.
  std::vector<Span> spans;
  // Formats whose text must always sit in markup (a .docx run): written around every stretch of text
  // outside all elements ("" for HTML, Markdown, plain text).
  std::string outside_open, outside_close;
};

// A literal piece of the output, or the index of a segment whose translation goes there.
struct Piece {
  std::string literal;
  int segment = -1;  // >= 0: Document::segments[segment]; `literal` is then empty
};

struct Document {
  std::string format;  // "text", "html", "markdown", "docx", "odt"
  std::vector<Piece> pieces;
  std::vector<Segment> segments;
  Escape escape = Escape::none;
  // What the reader repaired in malformed input ("line 3, column 5: unclosed <b>, closed at the end
  // of its paragraph"): the reply carries them as warnings.
  std::vector<std::string> warnings;
};

// Checks a segment's spans: inside the text, at UTF-8 character boundaries, empty kinds with
// begin == end, elements properly nested and in document order. Throws Error naming the segment.
void check_segment(const Segment& segment, std::size_t index);

// The segment written in its format: its text escaped, each span's markup around (or at) its place,
// text outside every element inside outside_open/outside_close where the format has them.
std::string render_segment(const Segment& segment, Escape escape);

// The document written back with `rendered[i]` in the place of segment i (render_segment of its
// translation). Throws Error if the counts differ.
std::string assemble(const Document& document, const std::vector<std::string>& rendered);

}  // namespace attn::document
