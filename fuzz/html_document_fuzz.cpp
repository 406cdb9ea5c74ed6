// libFuzzer target: the HTML reader (document/html_document.h), which reads a page or a fragment
// into literal pieces and segments to translate. The input is the HTML.
//
// Checked besides memory errors (attn::Error is the answer to invalid UTF-8 and NUL bytes):
// - every segment passes check_segment, and its markup is tags: an element's close ends the element
//   its open starts ("<b class=x>" ... "</b>", whatever the source left out), an empty element is
//   markup ("<br>", "<!-- x -->", "<code>…</code>");
// - written back untranslated (render_segment of each segment, assemble), a page read without
//   warnings comes back byte for byte, except where its text is written differently with the same
//   meaning (a character reference decoded: &eacute; as é; a raw '>' or '&' escaped): then the
//   output has as many '<' as the input (no markup lost or added: a '<' in text is a repair with a
//   warning), and is a fixed point, read again without warnings into as many segments and written
//   back byte for byte;
// - a page read with warnings (repaired) is written back as HTML that reads again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "document/document.h"
#include "document/html_document.h"
#include "fuzz_support.h"

namespace {

using attn::document::Document;
using attn::document::Span;

// "<B class=x>" -> "b", "</b >" -> "b".
std::string tag_name(const std::string& tag) {
  std::size_t i = tag.size() > 1 && tag[1] == '/' ? 2 : 1;
  std::string name;
  for (; i < tag.size() && tag[i] != ' ' && tag[i] != '\t' && tag[i] != '\n' && tag[i] != '\r' && tag[i] != '\f' &&
         tag[i] != '/' && tag[i] != '>';
       ++i)
    name += tag[i] >= 'A' && tag[i] <= 'Z' ? static_cast<char>(tag[i] - 'A' + 'a') : tag[i];
  return name;
}

std::string write_back(const Document& d) {
  std::vector<std::string> rendered;
  for (std::size_t i = 0; i < d.segments.size(); ++i) {
    attn::document::check_segment(d.segments[i], i);
    for (const Span& sp : d.segments[i].spans) {
      FUZZ_CHECK(sp.kind != Span::Kind::text, "a text span in HTML: " + sp.open);
      FUZZ_CHECK(sp.open.size() > 1 && sp.open.front() == '<' && sp.open.back() == '>',
                 "markup that is no tag: " + sp.open);
      if (sp.kind == Span::Kind::element)
        FUZZ_CHECK(sp.open[1] != '/' && sp.close.rfind("</", 0) == 0 && tag_name(sp.open) == tag_name(sp.close),
                   "an element " + sp.open + " closed by " + sp.close);
    }
    rendered.push_back(attn::document::render_segment(d.segments[i], attn::document::Escape::html));
  }
  return attn::document::assemble(d, rendered);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string html(reinterpret_cast<const char*>(data), size);
  Document d;
  try {
    d = attn::document::read_html(html);
  } catch (const attn::Error&) {
    return 0;
  }
  std::string out;
  try {
    out = write_back(d);
  } catch (const attn::Error& e) {
    FUZZ_CHECK(false, std::string("the document does not write back: ") + e.what());
  }
  Document again;
  try {
    again = attn::document::read_html(out);
  } catch (const attn::Error& e) {
    FUZZ_CHECK(false, std::string("the output does not read again: ") + e.what());
  }
  std::string out_again;
  try {
    out_again = write_back(again);
  } catch (const attn::Error& e) {
    FUZZ_CHECK(false, std::string("the output's document does not write back: ") + e.what());
  }
  if (d.warnings.empty() && out != html) {
    FUZZ_CHECK(std::count(out.begin(), out.end(), '<') == std::count(html.begin(), html.end(), '<'),
               "markup lost or added without a warning:\n" + out);
    FUZZ_CHECK(again.warnings.empty(), "normalized output read with warnings: " + again.warnings.front());
    FUZZ_CHECK(again.segments.size() == d.segments.size(), std::to_string(d.segments.size()) + " segments, " +
                                                               std::to_string(again.segments.size()) +
                                                               " once normalized:\n" + out);
    FUZZ_CHECK(out_again == out, "the normalized output is no fixed point:\n" + out + "\n---\n" + out_again);
  }
  return 0;
}
