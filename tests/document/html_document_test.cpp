// The HTML reader: pieces, segments and spans of hand-made pages; the source written back byte for
// byte with the segments untranslated (hand-made pages and generated ones); the repairs of malformed
// markup, each with its warning, checked by Python's html.parser to give well-formed translated
// blocks that keep every start tag of the source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "core/error.h"
#include "document/document.h"
#include "document/html_document.h"

namespace attn::document {
namespace {

using Kind = Span::Kind;

// The pieces in a line each: literals as they are, segments as "#i".
std::vector<std::string> pieces(const Document& d) {
  std::vector<std::string> out;
  for (const Piece& p : d.pieces)
    out.push_back(p.segment < 0 ? p.literal : std::string("#").append(std::to_string(p.segment)));
  return out;
}

std::string write_back(const Document& d) {
  std::vector<std::string> rendered;
  for (std::size_t i = 0; i < d.segments.size(); ++i) {
    check_segment(d.segments[i], i);
    rendered.push_back(render_segment(d.segments[i], Escape::html));
  }
  return assemble(d, rendered);
}

void expect_span(const Span& s, Kind kind, std::size_t begin, std::size_t end, const std::string& open,
                 const std::string& close, int parent) {
  EXPECT_EQ(s.kind, kind);
  EXPECT_EQ(s.begin, begin);
  EXPECT_EQ(s.end, end);
  EXPECT_EQ(s.open, open);
  EXPECT_EQ(s.close, close);
  EXPECT_EQ(s.parent, parent);
}

TEST(HtmlDocument, ReadsAFragment) {
  const Document d = read_html("Hello <b>world</b>, <i>again</i>");
  EXPECT_EQ(d.format, "html");
  EXPECT_EQ(d.escape, Escape::html);
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"#0"}));
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text, "Hello world, again");
  ASSERT_EQ(d.segments[0].spans.size(), 2u);
  expect_span(d.segments[0].spans[0], Kind::element, 6, 11, "<b>", "</b>", -1);
  expect_span(d.segments[0].spans[1], Kind::element, 13, 18, "<i>", "</i>", -1);
  EXPECT_TRUE(d.warnings.empty());
}

// document.h's example, with attributes, entities and nested inline elements.
TEST(HtmlDocument, ReadsAParagraphWithNestedInlineElements) {
  const std::string html = "<p>Let there be <b class=\"x\">light &amp; <i>day</i><br></b>.<br>Amen</p>";
  const Document d = read_html(html);
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"<p>", "#0", "</p>"}));
  ASSERT_EQ(d.segments.size(), 1u);
  const Segment& s = d.segments[0];
  EXPECT_EQ(s.text, "Let there be light & day.Amen");
  ASSERT_EQ(s.spans.size(), 4u);
  expect_span(s.spans[0], Kind::element, 13, 24, "<b class=\"x\">", "</b>", -1);
  expect_span(s.spans[1], Kind::element, 21, 24, "<i>", "</i>", 0);
  expect_span(s.spans[2], Kind::empty_element, 24, 24, "<br>", "", 0);
  expect_span(s.spans[3], Kind::empty_element, 25, 25, "<br>", "", -1);
  EXPECT_EQ(write_back(d), html);
  EXPECT_TRUE(d.warnings.empty());
}

TEST(HtmlDocument, KeepsAPageOutsideItsTextByteForByte) {
  const std::string html =
      "<!DOCTYPE html>\n"
      "<html lang=\"en\"><head><meta charset=\"utf-8\"><title>My &amp; page</title>\n"
      "<script>var s = \"</p>\"; if (a < b) {}</script><style>p > b {}</style></head>\n"
      "<body>\n"
      "  <h1>A <em>title</em></h1>\n"
      "  <!-- a comment -->\n"
      "  <pre>keep   <b>this</b></pre>\n"
      "  <div translate=\"no\">Brand <b>name</b></div>\n"
      "  <p class=\"lead notranslate\">Not this</p>\n"
      "</body></html>\n";
  const Document d = read_html(html);
  EXPECT_EQ(pieces(d), (std::vector<std::string>{
                           "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", "#0",
                           "</title>\n<script>var s = \"</p>\"; if (a < b) {}</script><style>p > b {}</style></head>\n"
                           "<body>\n  <h1>",
                           "#1",
                           "</h1>\n  <!-- a comment -->\n  <pre>keep   <b>this</b></pre>\n"
                           "  <div translate=\"no\">Brand <b>name</b></div>\n"
                           "  <p class=\"lead notranslate\">Not this</p>\n</body></html>\n"}));
  ASSERT_EQ(d.segments.size(), 2u);
  EXPECT_EQ(d.segments[0].text, "My & page");
  EXPECT_EQ(d.segments[1].text, "A title");
  EXPECT_EQ(write_back(d), html);
  EXPECT_TRUE(d.warnings.empty());
}

// Inline content that is not translated is one empty element holding all its source.
TEST(HtmlDocument, KeepsCodeScriptsAndUntranslatedSpansInsideTheText) {
  const std::string html =
      "<p>Run <code>ls &amp;&amp; cd</code> with <span translate=\"no\">attn</span> or "
      "<kbd class=\"notranslate\">Ctrl</kbd><!-- note --> <svg><text>x</text></svg>now</p>";
  const Document d = read_html(html);
  ASSERT_EQ(d.segments.size(), 1u);
  const Segment& s = d.segments[0];
  EXPECT_EQ(s.text, "Run  with  or  now");
  ASSERT_EQ(s.spans.size(), 5u);
  expect_span(s.spans[0], Kind::empty_element, 4, 4, "<code>ls &amp;&amp; cd</code>", "", -1);
  expect_span(s.spans[1], Kind::empty_element, 10, 10, "<span translate=\"no\">attn</span>", "", -1);
  expect_span(s.spans[2], Kind::empty_element, 14, 14, "<kbd class=\"notranslate\">Ctrl</kbd>", "", -1);
  expect_span(s.spans[3], Kind::empty_element, 14, 14, "<!-- note -->", "", -1);
  expect_span(s.spans[4], Kind::empty_element, 15, 15, "<svg><text>x</text></svg>", "", -1);
  EXPECT_EQ(write_back(d), html);
}

// A block inside a block splits its parent's text; whitespace between blocks stays literal.
TEST(HtmlDocument, SplitsRunsAtNestedBlocks) {
  const std::string html =
      "<ul>\n  <li>One <ul><li>Nested</li></ul> tail</li>\n  <li>Two</li>\n</ul>\n"
      "<div>In a div <p>a paragraph</p> after</div>";
  const Document d = read_html(html);
  EXPECT_EQ(pieces(d),
            (std::vector<std::string>{"<ul>\n  <li>", "#0", " <ul><li>", "#1", "</li></ul> ", "#2", "</li>\n  <li>",
                                      "#3", "</li>\n</ul>\n<div>", "#4", " <p>", "#5", "</p> ", "#6", "</div>"}));
  std::vector<std::string> texts;
  for (const Segment& s : d.segments) texts.push_back(s.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"One", "Nested", "tail", "Two", "In a div", "a paragraph", "after"}));
  EXPECT_EQ(write_back(d), html);
}

TEST(HtmlDocument, ReadsEachTableCell) {
  const std::string html =
      "<table>\n<caption>Verses</caption>\n<tr><th>Book</th><th>Verse</th></tr>\n"
      "<tr><td>Genesis</td><td> 1:1 </td><td>&nbsp;</td></tr>\n</table>";
  const Document d = read_html(html);
  std::vector<std::string> texts;
  for (const Segment& s : d.segments) texts.push_back(s.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"Verses", "Book", "Verse", "Genesis", "1:1"}));
  EXPECT_EQ(pieces(d)[0], "<table>\n<caption>");
  EXPECT_EQ(pieces(d).back(), " </td><td>&nbsp;</td></tr>\n</table>");  // a no-break space alone is no text
  EXPECT_EQ(write_back(d), html);
}

// An inline element around blocks (a link around a card) is a block itself.
TEST(HtmlDocument, TreatsAnInlineElementAroundBlocksAsABlock) {
  const std::string html = "<a href=\"/card\"><div>Card title</div><p>Card text</p></a>";
  const Document d = read_html(html);
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"<a href=\"/card\"><div>", "#0", "</div><p>", "#1", "</p></a>"}));
  EXPECT_TRUE(d.warnings.empty());
}

TEST(HtmlDocument, DecodesCharacterReferencesInTheText) {
  const Document d = read_html("<p>caf&eacute; &quot;x&quot; &#233;&#x41; AT&T &lt;b&gt; &amp;</p>");
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text,
            "caf\xC3\xA9 \"x\" \xC3\xA9"
            "A AT&T <b> &");
  // Written back, only &, < and > are escaped.
  EXPECT_EQ(write_back(d),
            "<p>caf\xC3\xA9 \"x\" \xC3\xA9"
            "A AT&amp;T &lt;b&gt; &amp;</p>");
  EXPECT_TRUE(d.warnings.empty());
  // References in attributes are the attribute's business: kept as they are.
  const Document a = read_html("<p><a title=\"&eacute;&amp;\" href='/?a=1&amp;b=\"2\"'>x</a></p>");
  EXPECT_EQ(a.segments[0].spans[0].open, "<a title=\"&eacute;&amp;\" href='/?a=1&amp;b=\"2\"'>");
}

// Numeric references as HTML5 reads them: windows-1252 for 0x80-0x9F, U+FFFD for none, a surrogate
// or a number too large (however many digits it has).
TEST(HtmlDocument, DecodesNumericReferencesAsHtml5Does) {
  const Document d = read_html("<p>&#65;&#x42;&#X43 &#128; &#0; &#xD800; &#x4eeeeeeeeeeeeeeeeeeeeee; &#; &#x;</p>");
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text, "ABC \xE2\x82\xAC \xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD &#; &#x;");
}

TEST(HtmlDocument, KeepsCrLfLineBreaks) {
  const std::string html = "<p>line one\r\nline two <b>and\r\n three</b></p>\r\n<p>next</p>\r\n";
  const Document d = read_html(html);
  ASSERT_EQ(d.segments.size(), 2u);
  EXPECT_EQ(d.segments[0].text, "line one\r\nline two and\r\n three");
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"<p>", "#0", "</p>\r\n<p>", "#1", "</p>\r\n"}));
  EXPECT_EQ(write_back(d), html);
}

TEST(HtmlDocument, ReadsBlocksWithImpliedEndTags) {
  const std::string html = "<ul><li>One<li>Two</ul><p>A<p>B";
  const Document d = read_html(html);
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"<ul><li>", "#0", "<li>", "#1", "</ul><p>", "#2", "<p>", "#3"}));
  EXPECT_TRUE(d.warnings.empty());  // the end tags HTML leaves out are not repairs
  EXPECT_EQ(write_back(d), html);
}

TEST(HtmlDocument, RejectsWhatIsNotHtml) {
  try {
    read_html("<p>caf\xC3</p>");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "HTML: invalid UTF-8 at byte 7");
  }
  try {
    read_html(std::string("<p>a\0b</p>", 10));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "binary data, not HTML, at byte 5");
  }
  EXPECT_TRUE(read_html("").pieces.empty());
}

// ---- the key property: written back untranslated, the source comes back byte for byte

TEST(HtmlDocument, WritesWellFormedPagesBackByteForByte) {
  const std::vector<std::string> pages = {
      "",
      "plain text",
      "  \n",
      "<p>a</p>",
      "<p><b>adjacent</b><i>tags</i><u>here</u></p>",
      "<p><b><i><u>deep</u></i></b> nesting</p>",
      "<p>x<br>y<br/>z<wbr>w<img src=\"a.png\" alt=\"A &amp; B\"></p>",
      "<p>a <a href='x.html?a=1&amp;b=2' title=\"say 'hi'\" data-q='say \"hi\"'>link</a></p>",
      "<P CLASS=x>Upper <B>case</B> tags</P>",
      "<p>Hi <my-widget data-x=1>custom</my-widget>!</p>",
      "<p>a<!-- c -->b<!---->c</p>",
      "<!DOCTYPE html><html><head><title>T</title></head><body><p>B</p></body></html>",
      "<!doctype html>\n<!-- c -->\n<html>\n<body>\ntext at the top\n</body>\n</html>\n",
      "<select><option>One</option><option selected>Two</option></select>",
      "<p>Size: <select><option>S</option></select> ok</p>",
      "<dl><dt>Term</dt><dd>Definition <em>here</em></dd></dl>",
      "<figure><img src=x><figcaption>A <b>caption</b></figcaption></figure>",
      "<blockquote>Quoted <q>text</q></blockquote>",
      "<details><summary>More</summary><p>Hidden</p></details>",
      "<form><label>Name <input name=n></label><button type=submit>Send</button></form>",
      "<p>a<template><p>x</p></template>b</p>",
      "<p>Math <math><mi>x</mi></math> and <svg viewBox=\"0 0 1 1\"><text>t</text></svg>.</p>",
      "<textarea>a <b> c</textarea><p>after</p>",
      "<p>x</p><script>document.write('<p>not text</p>')</script><p>y</p>",
      "<div><div><div>deep</div></div></div>",
      "<p>\n  Lots of\n  lines\n  here\n</p>",
      "<p>tabs\tand\fform feeds</p>",
      "<p>caf\xC3\xA9 \xE2\x80\x94 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x99\x82</p>",
      "<p>&amp;&lt;&gt; only these</p>",
      "<p>\"quotes\" and 'apostrophes'</p>",
      "<table><thead><tr><th>A</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>",
      "<ol start=3><li><p>para in li</p></li><li>plain <ol><li>sub</li></ol></li></ol>",
      "<p>a <span lang=fr>fran\xC3\xA7"
      "ais</span> b</p>",
      "<p><a href=x><img src=y alt=z></a> caption</p>",
      "\xEF\xBB\xBF<p>after a byte order mark</p>",
      "<p>x</p>\r\n<p>y\r\nz</p>\r\n",
      "<noscript><p>Enable scripts</p></noscript>",
      "<p>a <a href=1>one <a href=2>two</a> three</a> b</p>",
      "<div><span>text<div>inner</div>more</span></div>",
  };
  for (const std::string& page : pages) {
    SCOPED_TRACE(page);
    const Document d = read_html(page);
    EXPECT_TRUE(d.warnings.empty()) << d.warnings.front();
    EXPECT_EQ(write_back(d), page);
  }
}

// Random well-formed pages from a small grammar: blocks, inline elements, text with &amp; &lt; &gt;,
// comments, line breaks.
class PageMaker {
 public:
  explicit PageMaker(unsigned seed, bool code = true) : rng_(seed), code_(code) {}
  std::string page() {
    std::string out = pick(2) ? "<!DOCTYPE html>\n<html><head><title>" + text() + "</title></head><body>\n" : "";
    const bool whole = !out.empty();
    const int blocks = 1 + pick(4);
    for (int i = 0; i < blocks; ++i) out += block(0) + space();
    if (whole) out += "</body></html>\n";
    return out;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string space() {
    static const std::vector<std::string> spaces = {"", " ", "\n", "\r\n", "\n  ", "\t"};
    return spaces[static_cast<std::size_t>(pick(static_cast<int>(spaces.size())))];
  }
  std::string word() {
    static const std::vector<std::string> words = {"In",    "the",         "beginning",   "God",
                                                   "&amp;", "&lt;tag&gt;", "caf\xC3\xA9", "\"said\"",
                                                   "it's",  "1:1",         "x=y",         "\xE2\x80\x94"};
    return words[static_cast<std::size_t>(pick(static_cast<int>(words.size())))];
  }
  std::string text() {
    std::string t = word();
    for (int i = pick(4); i > 0; --i) t += (pick(5) ? " " : space() + " ") + word();
    return t;
  }
  std::string inline_content(int depth, bool in_link) {
    std::string out;
    for (int i = 1 + pick(3); i > 0; --i) {
      switch (depth < 3 ? pick(9) : 0) {
        case 0:
        case 1:
        case 2:
          out += text();
          break;
        case 3:
          out += "<b>" + inline_content(depth + 1, in_link) + "</b>";
          break;
        case 4:
          out += "<em class=\"e\">" + inline_content(depth + 1, in_link) + "</em>";
          break;
        case 5:
          out += in_link ? "<span>" + inline_content(depth + 1, in_link) + "</span>"
                         : "<a href='/x?a=1&amp;b=2'>" + inline_content(depth + 1, true) + "</a>";
          break;
        case 6:
          out += pick(2) ? "<br>" : "<img src=\"p.png\" alt=\"a &amp; b\">";
          break;
        case 7:
          out += pick(2) || !code_ ? "<!-- note -->" : "<code>x &lt; y</code>";
          break;
        case 8:
          out += space();
          break;
      }
      if (pick(2)) out += " ";
    }
    return out;
  }
  std::string block(int depth) {
    switch (depth < 3 ? pick(6) : 0) {
      case 0:
        return "<p>" + inline_content(0, false) + "</p>";
      case 1:
        return "<h2 id=\"h\">" + inline_content(0, false) + "</h2>";
      case 2: {
        std::string out = "<div>" + space();
        for (int i = 1 + pick(3); i > 0; --i) out += (pick(2) ? block(depth + 1) : inline_content(0, false)) + space();
        return out + "</div>";
      }
      case 3: {
        std::string out = "<ul>" + space();
        for (int i = 1 + pick(3); i > 0; --i)
          out += "<li>" + inline_content(0, false) + (pick(3) ? "" : block(depth + 1)) + "</li>" + space();
        return out + "</ul>";
      }
      case 4: {
        std::string out = "<table>" + space();
        for (int r = 1 + pick(2); r > 0; --r) {
          out += "<tr>";
          for (int c = 1 + pick(3); c > 0; --c) out += "<td>" + inline_content(0, false) + "</td>";
          out += "</tr>" + space();
        }
        return out + "</table>";
      }
      default:
        return "<blockquote>" + space() + block(depth + 1) + space() + "</blockquote>";
    }
  }
  std::mt19937 rng_;
  bool code_;  // <code> in the text
};

TEST(HtmlDocument, WritesGeneratedPagesBackByteForByte) {
  PageMaker maker(2026);
  std::size_t segments = 0;
  for (int i = 0; i < 500; ++i) {
    const std::string page = maker.page();
    SCOPED_TRACE(page);
    const Document d = read_html(page);
    ASSERT_TRUE(d.warnings.empty()) << d.warnings.front();
    ASSERT_EQ(write_back(d), page);
    segments += d.segments.size();
  }
  EXPECT_GT(segments, 2000u);
}

// ---- repairs

TEST(HtmlDocument, ClosesAnUnclosedElementAtTheEndOfItsBlock) {
  const Document d = read_html("<p>An <b>unclosed\nbold</p><p>next</p>");
  ASSERT_EQ(d.segments.size(), 2u);
  expect_span(d.segments[0].spans[0], Kind::element, 3, 16, "<b>", "</b>", -1);
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 1, column 7: unclosed <b>, closed at the end of its block"}));
  EXPECT_EQ(write_back(d), "<p>An <b>unclosed\nbold</b></p><p>next</p>");
}

TEST(HtmlDocument, DropsAStrayEndTagFromTheText) {
  const Document d = read_html("<p>stray</i> end</p>\n</i>");
  EXPECT_EQ(d.segments[0].text, "stray end");
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 1, column 9: stray </i> dropped"}));
  // Outside the text it stays, as the source has it.
  EXPECT_EQ(write_back(d), "<p>stray end</p>\n</i>");
}

TEST(HtmlDocument, ClosesCrossedElementsInOrder) {
  const Document d = read_html("<p><b><i>crossed</b> tags</i></p>");
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 1, column 7: unclosed <i>, closed with its parent <b>",
                                                  "line 1, column 26: stray </i> dropped"}));
  EXPECT_EQ(write_back(d), "<p><b><i>crossed</i></b> tags</p>");
}

TEST(HtmlDocument, WritesALoneLessThanSignAsAnEntity) {
  const Document d = read_html("<p>a < b</p>");
  EXPECT_EQ(d.segments[0].text, "a < b");
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 1, column 6: a '<' that starts no tag, written as &lt;"}));
  EXPECT_EQ(write_back(d), "<p>a &lt; b</p>");
}

// The tokenizer drops "</>"; Gumbo counts it into the next tag's text, the reader does not.
TEST(HtmlDocument, DropsAnEmptyEndTag) {
  const Document d = read_html("<p>a</><i>b</i></p>");
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text, "ab");
  expect_span(d.segments[0].spans[0], Kind::element, 1, 2, "<i>", "</i>", -1);
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 1, column 5: stray </> dropped"}));
  EXPECT_EQ(write_back(d), "<p>a<i>b</i></p>");
}

// A comment the input ends in before its "-->" stays out of the text: the end tags written after it
// would be inside it.
TEST(HtmlDocument, KeepsAnUnterminatedCommentOutOfTheText) {
  const Document d = read_html("x <b>y <!-- open");
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"#0", " <!-- open"}));
  EXPECT_EQ(write_back(d), "x <b>y</b> <!-- open");
}

TEST(HtmlDocument, ReadsAnEndTagBrAsBr) {
  const Document d = read_html("<p>a</br>b</p>");
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 1, column 5: </br> read as <br>"}));
  EXPECT_EQ(write_back(d), "<p>a<br>b</p>");
}

TEST(HtmlDocument, NamesLinesAndColumnsInCharacters) {
  const Document d = read_html("<p>one</p>\r\n<p>caf\xC3\xA9 <b>x</p>");
  EXPECT_EQ(d.warnings, (std::vector<std::string>{"line 2, column 9: unclosed <b>, closed at the end of its block"}));
}

// The repairs of malformed pages give translated blocks that are well-formed, and keep every start
// tag of the source: checked with Python's html.parser on a "translation" (each segment's text in
// upper case, its spans where they were).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* const kCheckTags = R"(
import json, sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
        "wbr", "keygen", "image"}

class Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events = []
    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, self.get_starttag_text()))
    def handle_startendtag(self, tag, attrs):
        self.events.append(("startend", tag, self.get_starttag_text()))
    def handle_endtag(self, tag):
        self.events.append(("end", tag, None))

def parse(text):
    p = Tags()
    p.feed(text)
    p.close()
    return p.events

def unbalanced(text):
    stack = []
    for kind, tag, raw in parse(text):
        if kind == "start" and tag not in VOID:
            stack.append(tag)
        elif kind == "end":
            if not stack or stack[-1] != tag:
                return "</%s> closes %s" % (tag, "<%s>" % stack[-1] if stack else "nothing")
            stack.pop()
    return "<%s> left open" % stack[-1] if stack else None

def starts(text):
    return sorted(raw for kind, tag, raw in parse(text) if kind != "end")

# One line per case: OK, or what is wrong.
for case in json.load(open(sys.argv[1], encoding="utf-8")):
    problems = []
    for i, segment in enumerate(case["segments"]):
        why = unbalanced(segment)
        if why:
            problems.append("segment %d %r: %s" % (i, segment, why))
    if starts(case["input"]) != starts(case["output"]):
        problems.append("start tags %r became %r" % (starts(case["input"]), starts(case["output"])))
    print(repr("; ".join(problems)) if problems else "OK")
)";

// Per page: "OK", or what is wrong.
std::vector<std::string> check_with_python(const std::vector<std::string>& pages) {
  const auto dir = testing::fresh_temp_dir("html_document");
  std::ofstream(dir / "check.py") << kCheckTags;
  {
    std::ofstream data(dir / "data.json", std::ios::binary);
    data << "[";
    for (std::size_t k = 0; k < pages.size(); ++k) {
      const Document d = read_html(pages[k]);
      std::vector<std::string> rendered;
      for (std::size_t i = 0; i < d.segments.size(); ++i) {
        Segment upper = d.segments[i];
        for (char& c : upper.text)
          if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        check_segment(upper, i);
        rendered.push_back(render_segment(upper, Escape::html));
      }
      data << (k ? ",\n" : "") << "{\"input\": " << json_string(pages[k])
           << ", \"output\": " << json_string(assemble(d, rendered)) << ", \"segments\": [";
      for (std::size_t i = 0; i < rendered.size(); ++i) data << (i ? ", " : "") << json_string(rendered[i]);
      data << "]}";
    }
    data << "]";
  }
  const std::string command = "/usr/bin/python3 " + (dir / "check.py").string() + " " + (dir / "data.json").string();
  std::FILE* p = ::popen(command.c_str(), "r");
  if (!p) return {"popen failed"};
  std::string result;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) result.append(buf, n);
  const int status = ::pclose(p);
  if (status != 0) return {"python3 failed (" + std::to_string(status) + "): " + result};
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < result.size();) {
    const std::size_t end = result.find('\n', at);
    lines.push_back(result.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? result.size() : end + 1;
  }
  return lines;
}

TEST(HtmlDocument, RepairsMalformedPagesIntoWellFormedTranslatedBlocks) {
  const std::vector<std::string> pages = {
      "<p>An <b>unclosed bold</p><p>next</p>",
      "<p>stray</i> end tag</p>",
      "<p><b><i>crossed</b> tags</i></p>",
      "<p>a < b and c <d</p>",
      "<p>Use <code>ls -l</p><p>next</p>",
      "<p>one <b>bold <p>new paragraph</b> tail</p>",
      "<p>x <a href=\"/\"><div>Card</div></a> y</p>",
      "<ul><li>One <b>bold<li>Two</b></ul>",
      "<p>Open <b><i><u>three</p>",
      "<table><tr><td>a <i>cell<td>b</table>",
      "Hello <b>world",
      "<p>Run <script>var x = '</p>';",
      "<b>x<p>y</b>z</p>",
      "<p><a href=1>link <a href=2>inside</p>",
      "<p>end tags </span></em> nowhere open</p>",
  };
  for (const std::string& page : pages) EXPECT_FALSE(read_html(page).warnings.empty()) << page;
  std::vector<std::string> checked = pages;
  // Well-formed pages pass the same check.
  checked.push_back("<p>Let there be <b class=\"x\">light &amp; <i>day</i><br></b>.<br>Amen</p>");
  const std::vector<std::string> results = check_with_python(checked);
  ASSERT_EQ(results.size(), checked.size()) << results.front();
  for (std::size_t i = 0; i < checked.size(); ++i) EXPECT_EQ(results[i], "OK") << checked[i];
}

// Generated pages broken at random: end tags left out, stray end tags and lone '<' put in between
// tags. Every repair keeps the translated blocks well-formed and every start tag of the source.
TEST(HtmlDocument, RepairsRandomlyBrokenPages) {
  PageMaker maker(99, /*code=*/false);
  std::mt19937 rng(5);
  const std::vector<std::string> strays = {"</b>",   "</i>",  "</em>", "</a>",  "</span>", "</p>",
                                           "</div>", "</li>", "< ",    "</td>", "</u>"};
  const std::vector<std::string> droppable = {"</b>",  "</em>", "</a>",   "</span>", "</p>",
                                              "</li>", "</td>", "</div>", "</h2>"};
  std::vector<std::string> pages;
  std::size_t repaired = 0;
  for (int i = 0; i < 300; ++i) {
    std::string page = maker.page();
    for (int k = std::uniform_int_distribution<int>(1, 4)(rng); k > 0; --k) {
      // Positions between tags: before a '<' or after a '>'.
      std::vector<std::size_t> cuts;
      for (std::size_t p = 0; p < page.size(); ++p) {
        if (page[p] == '<') cuts.push_back(p);
        if (page[p] == '>') cuts.push_back(p + 1);
      }
      if (cuts.empty()) break;
      const std::size_t at = cuts[std::uniform_int_distribution<std::size_t>(0, cuts.size() - 1)(rng)];
      if (std::uniform_int_distribution<int>(0, 1)(rng)) {
        page.insert(at, strays[std::uniform_int_distribution<std::size_t>(0, strays.size() - 1)(rng)]);
      } else {
        for (const std::string& end : droppable) {
          if (page.compare(at, end.size(), end) == 0) {
            page.erase(at, end.size());
            break;
          }
        }
      }
    }
    if (!read_html(page).warnings.empty()) ++repaired;
    pages.push_back(page);
  }
  EXPECT_GT(repaired, 100u);
  const std::vector<std::string> results = check_with_python(pages);
  ASSERT_EQ(results.size(), pages.size()) << results.front();
  for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(results[i], "OK") << pages[i];
}

}  // namespace
}  // namespace attn::document
