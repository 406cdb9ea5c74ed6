// The Markdown reader: the blocks and inline syntax of hand-made documents as pieces, segments and
// spans; emphasis matched as CommonMark matches it, and left as text where it does not match; every
// document written back untranslated byte for byte (hand-made ones and generated ones).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "document/document.h"
#include "document/markdown_document.h"

namespace attn::document {
namespace {

// The pieces in a line each: literals as they are, segments as "#i".
std::vector<std::string> pieces(const Document& d) {
  std::vector<std::string> out;
  for (const Piece& p : d.pieces)
    out.push_back(p.segment < 0 ? p.literal : std::string("#").append(std::to_string(p.segment)));
  return out;
}

std::vector<std::string> texts(const Document& d) {
  std::vector<std::string> out;
  for (const Segment& s : d.segments) out.push_back(s.text);
  return out;
}

// A segment's spans, one a line: "element [6,10) * *", "empty 4 `code`", "text 12 > ", with " ^p"
// for a parent.
std::vector<std::string> spans(const Segment& s) {
  std::vector<std::string> out;
  for (const Span& sp : s.spans) {
    std::string line;
    switch (sp.kind) {
      case Span::Kind::element:
        line = "element [" + std::to_string(sp.begin) + "," + std::to_string(sp.end) + ") " + sp.open + " " + sp.close;
        break;
      case Span::Kind::empty_element:
        line = "empty " + std::to_string(sp.begin) + " " + sp.open;
        break;
      case Span::Kind::text:
        line = "text " + std::to_string(sp.begin) + " " + sp.open;
        break;
    }
    if (sp.parent >= 0) line += " ^" + std::to_string(sp.parent);
    out.push_back(line);
  }
  return out;
}

std::string write_back(const Document& d) {
  std::vector<std::string> rendered;
  for (std::size_t i = 0; i < d.segments.size(); ++i) {
    check_segment(d.segments[i], i);
    rendered.push_back(render_segment(d.segments[i], Escape::none));
  }
  return assemble(d, rendered);
}

// One paragraph's only segment.
Segment paragraph(const std::string& markdown) {
  const Document d = read_markdown(markdown);
  EXPECT_EQ(d.segments.size(), 1u) << markdown;
  EXPECT_EQ(write_back(d), markdown);
  return d.segments.empty() ? Segment{} : d.segments[0];
}

TEST(MarkdownDocument, ReadsAParagraphWithInlineSyntax) {
  const Document d = read_markdown("Some *emphasis*, **strong**, `code` and [a link](http://x.org \"T\").\n");
  EXPECT_EQ(d.format, "markdown");
  EXPECT_EQ(d.escape, Escape::none);
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"#0", "\n"}));
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text, "Some emphasis, strong,  and a link.");
  EXPECT_EQ(spans(d.segments[0]),
            (std::vector<std::string>{"element [5,13) * *", "element [15,21) ** **", "empty 23 `code`",
                                      "element [28,34) [ ](http://x.org \"T\")"}));
}

TEST(MarkdownDocument, KeepsBlockSyntaxInThePieces) {
  const std::string md =
      "---\ntitle: \"Front *matter*\"\n---\n"
      "# A *title* #\n"
      "\n"
      "Setext heading\n"
      "==============\n"
      "\n"
      "```js\nvar x = \"*not*\";\n```\n"
      "\n"
      "    indented code\n"
      "\n"
      "* * *\n"
      "[ref]: http://example.com \"Title\"\n"
      "<div>\nan HTML block\n</div>\n"
      "\n"
      "<!-- a comment -->\n"
      "Last.";
  const Document d = read_markdown(md);
  EXPECT_EQ(texts(d), (std::vector<std::string>{"A title", "Setext heading", "Last."}));
  EXPECT_EQ(pieces(d), (std::vector<std::string>{
                           "---\ntitle: \"Front *matter*\"\n---\n# ", "#0", " #\n\n", "#1",
                           "\n==============\n\n```js\nvar x = \"*not*\";\n```\n\n    indented code\n\n* * *\n"
                           "[ref]: http://example.com \"Title\"\n<div>\nan HTML block\n</div>\n\n<!-- a comment -->\n",
                           "#2"}));
  EXPECT_EQ(write_back(d), md);
}

// A paragraph's lines are one segment; the line breaks and the indentation of a list item's
// continuation lines stay in the text.
TEST(MarkdownDocument, ReadsListItemsWithTheirContinuationLines) {
  const std::string md =
      "- item one\n"
      "  continued here\n"
      "- item **two**\n"
      "  1. nested\n"
      "  2. items\n"
      "\n"
      "     para in the nested item\n"
      "- [ ] a task\n"
      "- [x] done\n"
      "\n"
      "10) ordered\n";
  const Document d = read_markdown(md);
  EXPECT_EQ(texts(d), (std::vector<std::string>{"item one\n  continued here", "item two", "nested", "items",
                                                "para in the nested item", "a task", "done", "ordered"}));
  EXPECT_EQ(pieces(d),
            (std::vector<std::string>{"- ", "#0", "\n- ", "#1", "\n  1. ", "#2", "\n  2. ", "#3", "\n\n     ", "#4",
                                      "\n- [ ] ", "#5", "\n- [x] ", "#6", "\n\n10) ", "#7", "\n"}));
  EXPECT_EQ(write_back(d), md);
}

// Container markup inside a paragraph ("> " of a block quote) is a text span at the start of its
// line; a lazy continuation line has none.
TEST(MarkdownDocument, ReadsBlockQuotesWithTheirMarkersAsTextSpans) {
  const std::string md = "> quoted *line*\n> continues\nlazy line\n\n> > nested\n> > quote\n";
  const Document d = read_markdown(md);
  ASSERT_EQ(d.segments.size(), 2u);
  EXPECT_EQ(d.segments[0].text, "quoted line\ncontinues\nlazy line");
  EXPECT_EQ(spans(d.segments[0]), (std::vector<std::string>{"element [7,11) * *", "text 12 > "}));
  EXPECT_EQ(d.segments[1].text, "nested\nquote");
  EXPECT_EQ(spans(d.segments[1]), (std::vector<std::string>{"text 7 > > "}));
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"> ", "#0", "\n\n> > ", "#1", "\n"}));
  EXPECT_EQ(write_back(d), md);
}

TEST(MarkdownDocument, ReadsEachTableCell) {
  const std::string md =
      "| Book | Verse |\n"
      "|------|:-----:|\n"
      "| *Genesis* | 1:1 |\n"
      "| Exodus | a \\| b |\n"
      "\n"
      "a | b\n"
      "--|--\n"
      "c | d\n";
  const Document d = read_markdown(md);
  EXPECT_EQ(texts(d),
            (std::vector<std::string>{"Book", "Verse", "Genesis", "1:1", "Exodus", "a \\| b", "a", "b", "c", "d"}));
  EXPECT_EQ(pieces(d)[0], "| ");
  EXPECT_EQ(pieces(d)[2], " | ");
  EXPECT_EQ(pieces(d)[4], " |\n|------|:-----:|\n| ");
  EXPECT_EQ(spans(d.segments[2]), (std::vector<std::string>{"element [0,7) * *"}));
  EXPECT_EQ(write_back(d), md);
}

TEST(MarkdownDocument, ReadsLinksAndImages) {
  const std::string md =
      "[ref]: http://ex.com\n"
      "[Two Words]: <http://ex.com/two> 'T'\n"
      "\n"
      "Use [ref], [the text][ref], [ref][] and [two  words]; ![an image](a.png \"t\") stays; "
      "[not defined] is text; [**bold** link](u) and [nested [brackets]](u).";
  const Document d = read_markdown(md);
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].text,
            "Use ref, the text, ref and two  words;  stays; [not defined] is text; bold link and nested [brackets].");
  EXPECT_EQ(
      spans(d.segments[0]),
      (std::vector<std::string>{"element [4,7) [ ]", "element [9,17) [ ][ref]", "element [19,22) [ ][]",
                                "element [27,37) [ ]", "empty 39 ![an image](a.png \"t\")", "element [70,79) [ ](u)",
                                "element [70,74) ** ** ^5", "element [84,101) [ ](u)"}));
  EXPECT_EQ(write_back(d), md);
}

TEST(MarkdownDocument, KeepsCodeSpansAutolinksHtmlAndLineBreaksAsEmptyElements) {
  const Segment s = paragraph(
      "A `` code ` span `` and <https://a.org/x> or <me@ex.com>, <b>inline</b> html,\n"
      "a hard  \nbreak and\\\nanother, `unclosed code");
  EXPECT_EQ(s.text, "A  and  or , inline html,\na hard\nbreak and\nanother, `unclosed code");
  EXPECT_EQ(spans(s),
            (std::vector<std::string>{"empty 2 `` code ` span ``", "empty 7 <https://a.org/x>", "empty 11 <me@ex.com>",
                                      "empty 13 <b>", "empty 19 </b>", "empty 32   ", "empty 42 \\"}));
}

TEST(MarkdownDocument, MarksHardLineBreaks) {
  const Segment s = paragraph("two spaces  \nand a backslash\\\nend");
  EXPECT_EQ(s.text, "two spaces\nand a backslash\nend");
  EXPECT_EQ(spans(s), (std::vector<std::string>{"empty 10   ", "empty 26 \\"}));
}

TEST(MarkdownDocument, MatchesEmphasisAsCommonMarkDoes) {
  struct Case {
    std::string markdown, text;
    std::vector<std::string> spans;
  };
  const std::vector<Case> cases = {
      {"*a*", "a", {"element [0,1) * *"}},
      {"_a_ and __b__", "a and b", {"element [0,1) _ _", "element [6,7) __ __"}},
      {"***both***", "both", {"element [0,4) * *", "element [0,4) ** ** ^0"}},
      {"*a **b** c*", "a b c", {"element [0,5) * *", "element [2,3) ** ** ^0"}},
      {"**a*", "*a", {"element [1,2) * *"}},
      {"*a**", "a*", {"element [0,1) * *"}},
      {"~~gone~~ and ~one~", "gone and ~one~", {"element [0,4) ~~ ~~"}},
      {"*a [b](c) d*", "a b d", {"element [0,5) * *", "element [2,3) [ ](c) ^0"}},
      {"__init__", "init", {"element [0,4) __ __"}},
      // Unmatched or not flanking: plain text.
      {"*a", "*a", {}},
      {"a*", "a*", {}},
      {"2 * 3 * 4", "2 * 3 * 4", {}},
      {"snake_case_name and x_y", "snake_case_name and x_y", {}},
      {"a * b*", "a * b*", {}},
      {"\\*not\\*", "\\*not\\*", {}},
      {"**unclosed strong and _unclosed em", "**unclosed strong and _unclosed em", {}},
      {"[link *a](u) b*", "link *a b*", {"element [0,7) [ ](u)"}},
      {"*a\nb*", "a\nb", {"element [0,3) * *"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.markdown);
    const Segment s = paragraph(c.markdown);
    EXPECT_EQ(s.text, c.text);
    EXPECT_EQ(spans(s), c.spans);
  }
}

TEST(MarkdownDocument, KeepsCrLfLineBreaks) {
  const std::string md = "# Title\r\n\r\nline one\r\nline *two*\r\n\r\n- item\r\n  more\r\n";
  const Document d = read_markdown(md);
  EXPECT_EQ(texts(d), (std::vector<std::string>{"Title", "line one\r\nline two", "item\r\n  more"}));
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"# ", "#0", "\r\n\r\n", "#1", "\r\n\r\n- ", "#2", "\r\n"}));
  EXPECT_EQ(write_back(d), md);
}

TEST(MarkdownDocument, LeavesBlocksWithoutTextLiteral) {
  const Document d = read_markdown("![only an image](a.png)\n\n`only code`\n\n#\n\n   \n");
  EXPECT_TRUE(d.segments.empty());
  EXPECT_EQ(pieces(d), (std::vector<std::string>{"![only an image](a.png)\n\n`only code`\n\n#\n\n   \n"}));
}

TEST(MarkdownDocument, RejectsWhatIsNotText) {
  try {
    read_markdown("caf\xC3 au lait");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Markdown: invalid UTF-8 at byte 4");
  }
  try {
    read_markdown(std::string("a\0b", 3));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "binary data, not Markdown, at byte 2");
  }
  EXPECT_TRUE(read_markdown("").pieces.empty());
}

// ---- the key property: written back untranslated, every document comes back byte for byte

TEST(MarkdownDocument, WritesDocumentsBackByteForByte) {
  const std::vector<std::string> documents = {
      "",
      "plain",
      "\n\n\n",
      "trailing spaces   \n",
      "# only a heading",
      "Title\n---\n\ntext",
      "- a\n- b\n\n  - c\n\n    d\n",
      "1. one\n1. two\n   * nested *em*\n",
      "> a\n>\n> b\n",
      "> - quoted list\n>   continued\n",
      "- > quote in a list\n  > continued\n",
      "```\nunclosed fence\n",
      "~~~~\n~~~\nstill code\n~~~~\nafter",
      "\ttab indented code\n\n\ttab - item\n",
      "-\tlist with a tab\n\n  \tindented\n",
      "<script>\nvar a = '*x*';\n</script>\npara",
      "a <span class=\"x\">b</span> c",
      "[a]: /u\n[a]\n\n[b]: /v \"multi\nline title\"\n",
      "| a |\n| - |\n| b |\nnot a row?\n\nafter",
      "a | b\n- | -\n",
      "text with trailing backslash\\",
      "[unclosed link(",
      "![unclosed image",
      "*a **b* c**",
      "***a** b*",
      "_a *b_ c*",
      "<http://a.b/c d> <a@b",
      "` `` ` ``` ```` `",
      "line\\\n  \nnext",
      "\xEF\xBB\xBF# heading after a byte order mark",
      "caf\xC3\xA9 *\xC3\xA9t\xC3\xA9* \xE2\x80\x94 \xE4\xB8\xAD\xE6\x96\x87*\xE5\xAD\x97*",
      "a\rb\rc",
      "setext with lazy\n> text\n===",
      "    code\n  para\n    more",
      "***\n---\n___\n",
      "&amp; &copy; entities and \\\\ \\` escapes",
  };
  for (const std::string& md : documents) {
    SCOPED_TRACE(md);
    EXPECT_EQ(write_back(read_markdown(md)), md);
  }
}

// Random documents from a grammar of Markdown's syntax characters, well-formed or not.
TEST(MarkdownDocument, WritesGeneratedDocumentsBackByteForByte) {
  const std::vector<std::string> atoms = {
      "word",       " ",     " ",   "  ",    "\n",       "\n",           "\r\n",
      "\n\n",       "*",     "**",  "_",     "__",       "~~",           "`",
      "``",         "[",     "]",   "(",     ")",        "](u)",         "](<a b> \"t\")",
      "![",         "\\",    "\\*", "<b>",   "</b>",     "<http://a.b>", "#",
      "# ",         "> ",    "- ",  "1. ",   "|",        "---",          "```",
      "~~~",        "    ",  "\t",  "&amp;", "\xC3\xA9", "[r]",          "[r]: /x\n",
      "<!-- c -->", "<div>", "==="};
  std::mt19937 rng(7);
  std::size_t segments = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string md;
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int k = 0; k < n; ++k) md += atoms[std::uniform_int_distribution<std::size_t>(0, atoms.size() - 1)(rng)];
    SCOPED_TRACE(md);
    const Document d = read_markdown(md);
    ASSERT_EQ(write_back(d), md);
    ASSERT_TRUE(d.warnings.empty());
    segments += d.segments.size();
  }
  EXPECT_GT(segments, 3000u);
}

}  // namespace
}  // namespace attn::document
