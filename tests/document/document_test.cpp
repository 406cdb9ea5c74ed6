// The document model: segments written back with their spans, checked for a well-formed tree.
#include <gtest/gtest.h>

#include "core/error.h"
#include "document/document.h"

namespace attn::document {
namespace {

using Kind = Span::Kind;

// <p>Let there be <b>light &amp; <i>day</i><br></b>.<br>Amen</p>, by hand.
Segment light() {
  Segment s;
  s.text = "Let there be light & day. Amen";
  //        0123456789012345678901234567890
  s.spans = {{Kind::element, 13, 24, "<b class=\"x\">", "</b>", -1},
             {Kind::element, 21, 24, "<i>", "</i>", 0},
             {Kind::empty_element, 24, 24, "<br>", "", 0},
             {Kind::empty_element, 25, 25, "<br>", "", -1}};
  return s;
}

TEST(Document, RendersNestedSpansInTheirParents) {
  const Segment s = light();
  EXPECT_NO_THROW(check_segment(s, 0));
  EXPECT_EQ(render_segment(s, Escape::html), "Let there be <b class=\"x\">light &amp; <i>day</i><br></b>.<br> Amen");
  EXPECT_EQ(render_segment(s, Escape::none), "Let there be <b class=\"x\">light & <i>day</i><br></b>.<br> Amen");
}

// A .docx paragraph: text outside every run's element still needs a run around it.
TEST(Document, WrapsTextOutsideElementsWhereTheFormatNeedsIt) {
  Segment s;
  s.text = "Hello {name} & <bye>";
  s.outside_open = "<w:r><w:t xml:space=\"preserve\">";
  s.outside_close = "</w:t></w:r>";
  s.spans = {{Kind::element, 0, 5, "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">", "</w:t></w:r>", -1}};
  EXPECT_EQ(render_segment(s, Escape::xml),
            "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">Hello</w:t></w:r>"
            "<w:r><w:t xml:space=\"preserve\"> {name} &amp; &lt;bye&gt;</w:t></w:r>");
  // A placeholder kept as a text span is written as text, inside the same run as the text around it.
  s.text = "Hello ";
  s.spans.push_back({Kind::text, 6, 6, "{name}", "", -1});
  EXPECT_EQ(render_segment(s, Escape::xml),
            "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">Hello</w:t></w:r>"
            "<w:r><w:t xml:space=\"preserve\"> {name}</w:t></w:r>");
}

TEST(Document, ChecksTheSpanTree) {
  Segment s = light();
  s.spans[1].end = 26;  // the child outgrows its parent
  EXPECT_THROW(check_segment(s, 3), Error);
  s = light();
  s.spans[3].begin = s.spans[3].end = 20;  // before its previous sibling's end
  EXPECT_THROW(check_segment(s, 0), Error);
  s = light();
  s.spans[2].end = 25;  // an empty element with a length
  EXPECT_THROW(check_segment(s, 0), Error);
  s = light();
  s.text = "Let there be light \xC3\xA9 day. Amen";
  s.spans[1].begin = 20;  // inside é
  EXPECT_THROW(check_segment(s, 0), Error);
  try {
    s = light();
    s.spans[0].parent = 2;
    check_segment(s, 7);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "document segment 7, span 0: its parent comes after it");
  }
}

TEST(Document, AssemblesPiecesAndSegments) {
  Document d;
  d.pieces = {{"<p>", -1}, {"", 0}, {"</p>\n<p>", -1}, {"", 1}, {"</p>", -1}};
  d.segments.resize(2);
  EXPECT_EQ(assemble(d, {"uno", "dos"}), "<p>uno</p>\n<p>dos</p>");
  EXPECT_THROW(assemble(d, {"uno"}), Error);
}

}  // namespace
}  // namespace attn::document
