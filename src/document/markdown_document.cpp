// Markdown in, Markdown out: a reader of CommonMark's common forms (and GFM's tables and
// strikethrough), written for this purpose: it finds the text of each block and the inline syntax
// inside it, and leaves every byte where it was.
//
// Blocks (line by line, as CommonMark's block parser goes): block quotes and list items are
// containers, matched at the start of each line; paragraphs (with lazy continuation lines), ATX and
// setext headings, tables, fenced and indented code, HTML blocks, thematic breaks, link reference
// definitions and front matter are the leaves. The text of a paragraph, a heading or a table cell
// becomes a segment; everything else is a literal piece.
//
// A paragraph's lines are one segment: the line break and the next line's indentation stay in the
// segment's text (they are whitespace to the translation: "- item\n  continued" gives
// "item\n  continued"); where the next line starts with container markup that is not whitespace
// (a block quote's "> "), that markup is a text span at the start of the line, kept as it is and
// never translated ("> a\n> b" gives the text "a\nb" with the span "> " at 2).
//
// Inlines (as CommonMark's inline parser goes): code spans, autolinks, inline HTML tags, images and
// hard line breaks are empty elements holding their source; emphasis, strong emphasis and
// strikethrough (~~x~~) are elements whose open and close are their delimiters, matched with
// CommonMark's delimiter algorithm (flanking runs, no intraword _, the rule of three); links are
// elements whose open is "[" and whose close is the rest ("](url \"title\")", "][ref]", "]").
// Backslash escapes and entities stay in the text as they are written (the text is written back
// unescaped: Escape::none). Unmatched syntax is text.
//
// Simplifications, none of which changes a byte of the output (a document written back untranslated
// is always the input): tabs count to the next multiple of 4 but are never split; link reference
// definitions are read on one line (one whose title goes on to the next line is a paragraph);
// labels match case-insensitively in ASCII only; a table's header row is the first line of a
// paragraph; GFM's task list markers ("- [ ] ") are kept out of the item's text; image alt text and
// link titles are not translated.
#include "document/markdown_document.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"

namespace attn::document {
namespace {

bool space_tab(char c) { return c == ' ' || c == '\t'; }
bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool ascii_alnum(char c) { return ascii_alpha(c) || ascii_digit(c); }
bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool ascii_punct(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}
char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool unicode_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x0B || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F || c == 0x3000;
}
// ASCII punctuation and the common Unicode punctuation and symbol blocks (CommonMark uses the
// Unicode P and S categories; these ranges hold the characters that occur next to emphasis).
bool unicode_punct(char32_t c) {
  if (c < 0x80) return ascii_punct(c);
  return (c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB2 && c != 0xB3 && c != 0xB5 && c != 0xB9 && c != 0xBA &&
          c != 0xBC && c != 0xBD && c != 0xBE) ||
         c == 0xD7 || c == 0xF7 || (c >= 0x2010 && c <= 0x2027) || (c >= 0x2030 && c <= 0x205E) ||
         (c >= 0x2190 && c <= 0x23FF) || (c >= 0x2500 && c <= 0x27BF) || (c >= 0x2E00 && c <= 0x2E7F) ||
         (c >= 0x3001 && c <= 0x3003) || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
         (c >= 0xFE10 && c <= 0xFE19) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF01 && c <= 0xFF0F) ||
         (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65);
}

bool starts_with_ci(std::string_view s, std::size_t at, std::string_view what) {
  if (at + what.size() > s.size()) return false;
  for (std::size_t i = 0; i < what.size(); ++i)
    if (lower_ascii(s[at + i]) != what[i]) return false;
  return true;
}

// A link label as it matches: ASCII letters in lower case, runs of whitespace as one space, trimmed.
std::string normalize_label(std::string_view label) {
  std::string out;
  bool space = false;
  for (char c : label) {
    if (ascii_space(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += lower_ascii(c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// HTML syntax as CommonMark knows it (inline HTML and HTML blocks of type 7).

std::size_t skip_ascii_space(std::string_view s, std::size_t i, std::size_t end) {
  while (i < end && ascii_space(s[i])) ++i;
  return i;
}

// Where each of the strings that end a comment, a processing instruction, a declaration or a CDATA
// section next occurs: searches go left to right, so one answer serves every search that starts
// before it (a text full of "<!--" and no "-->" is read in linear time).
class EndFinder {
 public:
  std::size_t find(std::string_view s, std::size_t end, std::string_view what, std::size_t from) {
    for (Memo& m : memos_) {
      if (m.what != what) continue;
      if (m.searched && from >= m.from && (m.found == std::string_view::npos || from <= m.found)) return m.result(what);
      m.from = from;
      m.found = s.substr(0, end).find(what, from);
      m.searched = true;
      return m.result(what);
    }
    return std::string_view::npos;
  }

 private:
  struct Memo {
    std::string_view what;
    std::size_t from = 0, found = std::string_view::npos;
    bool searched = false;
    std::size_t result(std::string_view w) const { return found == std::string_view::npos ? found : found + w.size(); }
  };
  Memo memos_[4] = {{"-->"}, {"?>"}, {"]]>"}, {">"}};
};

// The end of the open tag, closing tag, comment, processing instruction, declaration or CDATA
// section that starts at s[i] == '<', or npos.
std::size_t html_tag_end(std::string_view s, std::size_t i, std::size_t end, EndFinder& ends) {
  std::size_t j = i + 1;
  if (j >= end) return std::string_view::npos;
  const auto find = [&](std::string_view what, std::size_t from) { return ends.find(s, end, what, from); };
  if (ascii_alpha(s[j])) {  // open tag
    while (j < end && (ascii_alnum(s[j]) || s[j] == '-')) ++j;
    while (true) {
      const std::size_t k = skip_ascii_space(s, j, end);
      if (k < end && s[k] == '>') return k + 1;
      if (k + 1 < end && s[k] == '/' && s[k + 1] == '>') return k + 2;
      if (k == j || k >= end) return std::string_view::npos;  // an attribute needs whitespace before it
      j = k;
      if (!(ascii_alpha(s[j]) || s[j] == '_' || s[j] == ':')) return std::string_view::npos;
      while (j < end && (ascii_alnum(s[j]) || s[j] == '_' || s[j] == '.' || s[j] == ':' || s[j] == '-')) ++j;
      const std::size_t eq = skip_ascii_space(s, j, end);
      if (eq < end && s[eq] == '=') {
        std::size_t v = skip_ascii_space(s, eq + 1, end);
        if (v >= end) return std::string_view::npos;
        if (s[v] == '"' || s[v] == '\'') {
          const std::size_t close = s.substr(0, end).find(s[v], v + 1);
          if (close == std::string_view::npos) return std::string_view::npos;
          j = close + 1;
        } else {
          const std::size_t start = v;
          while (v < end && !ascii_space(s[v]) && std::string_view("\"'=<>`").find(s[v]) == std::string_view::npos) ++v;
          if (v == start) return std::string_view::npos;
          j = v;
        }
      }
    }
  }
  if (s[j] == '/') {  // closing tag
    ++j;
    if (j >= end || !ascii_alpha(s[j])) return std::string_view::npos;
    while (j < end && (ascii_alnum(s[j]) || s[j] == '-')) ++j;
    j = skip_ascii_space(s, j, end);
    return j < end && s[j] == '>' ? j + 1 : std::string_view::npos;
  }
  if (s[j] == '?') return find("?>", j + 1);
  if (s[j] == '!') {
    if (s.substr(j, 3) == "!--") {
      if (s.substr(j, 4) == "!-->") return j + 4;
      if (s.substr(j, 5) == "!--->") return j + 5;
      return find("-->", j + 3);
    }
    if (s.substr(j, 8) == "![CDATA[") return find("]]>", j + 8);
    if (j + 1 < end && ascii_alpha(s[j + 1])) return find(">", j + 1);
  }
  return std::string_view::npos;
}

const std::unordered_set<std::string_view> kHtmlBlockNames = {
    "address",  "article",    "aside",  "base",    "basefont", "blockquote", "body",     "caption",  "center",
    "col",      "colgroup",   "dd",     "details", "dialog",   "dir",        "div",      "dl",       "dt",
    "fieldset", "figcaption", "figure", "footer",  "form",     "frame",      "frameset", "h1",       "h2",
    "h3",       "h4",         "h5",     "h6",      "head",     "header",     "hr",       "html",     "iframe",
    "legend",   "li",         "link",   "main",    "menu",     "menuitem",   "nav",      "noframes", "ol",
    "optgroup", "option",     "p",      "param",   "search",   "section",    "summary",  "table",    "tbody",
    "td",       "tfoot",      "th",     "thead",   "title",    "tr",         "track",    "ul"};

// ---------------------------------------------------------------------------------------------
// Blocks.

struct TextBlock {
  std::size_t begin = 0, end = 0;                          // the source of the segment
  std::vector<std::pair<std::size_t, std::size_t>> zones;  // container markup inside it: text spans
};

struct Line {
  std::size_t begin, end;  // the content, without its line break
};

// A position in a line and its column (tabs to the next multiple of 4).
struct Cursor {
  std::size_t pos;
  int col;
};

class BlockParser {
 public:
  explicit BlockParser(const std::string& s) : s_(s) {
    std::size_t i = 0;
    while (i < s.size()) {
      std::size_t j = i;
      while (j < s.size() && s[j] != '\n' && s[j] != '\r') ++j;
      lines_.push_back({i, j});
      i = j;
      if (i < s.size()) i += (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
    }
  }

  void parse() {
    std::size_t first = front_matter();
    for (std::size_t i = first; i < lines_.size(); ++i) line(lines_[i]);
    close_leaf();
  }

  std::vector<TextBlock> blocks;
  std::unordered_set<std::string> labels;

 private:
  struct Container {
    bool quote;
    int width;  // list item: the columns its content is indented by
  };
  enum class Leaf { none, paragraph, fenced, indented, html, table };

  // --- columns

  int indent(Cursor c, std::size_t end) const {
    int cols = 0;
    for (std::size_t p = c.pos; p < end && space_tab(s_[p]); ++p) cols += s_[p] == '\t' ? 4 - (c.col + cols) % 4 : 1;
    return cols;
  }
  void skip_cols(Cursor& c, std::size_t end, int n) const {
    const int target = c.col + n;
    while (c.pos < end && c.col < target && space_tab(s_[c.pos])) {
      c.col += s_[c.pos] == '\t' ? 4 - c.col % 4 : 1;
      ++c.pos;
    }
  }
  void skip_all_space(Cursor& c, std::size_t end) const { skip_cols(c, end, 1 << 30); }
  bool blank(std::size_t from, std::size_t end) const {
    for (std::size_t p = from; p < end; ++p)
      if (!space_tab(s_[p])) return false;
    return true;
  }
  std::size_t trim_end(std::size_t begin, std::size_t end) const {
    while (end > begin && space_tab(s_[end - 1])) --end;
    return end;
  }

  // --- block starts, at a cursor after the containers

  // "---" on the first line, closed by "---" or "...": the index of the first line after it.
  std::size_t front_matter() const {
    const auto is = [&](const Line& l, std::string_view what) {
      return std::string_view(s_).substr(l.begin, trim_end(l.begin, l.end) - l.begin) == what;
    };
    if (lines_.empty() || !is(lines_[0], "---")) return 0;
    for (std::size_t i = 1; i < lines_.size(); ++i)
      if (is(lines_[i], "---") || is(lines_[i], "...")) return i + 1;
    return 0;
  }

  bool thematic_break(Cursor c, std::size_t end) const {
    if (indent(c, end) > 3) return false;
    skip_all_space(c, end);
    if (c.pos >= end) return false;
    const char m = s_[c.pos];
    if (m != '*' && m != '-' && m != '_') return false;
    int n = 0;
    for (std::size_t p = c.pos; p < end; ++p) {
      if (s_[p] == m)
        ++n;
      else if (!space_tab(s_[p]))
        return false;
    }
    return n >= 3;
  }

  // An ATX heading's text range (empty when the heading has none), or {npos, npos}.
  std::pair<std::size_t, std::size_t> atx_heading(Cursor c, std::size_t end) const {
    const std::pair<std::size_t, std::size_t> none{std::string::npos, std::string::npos};
    if (indent(c, end) > 3) return none;
    skip_all_space(c, end);
    std::size_t p = c.pos;
    while (p < end && s_[p] == '#') ++p;
    if (p == c.pos || p - c.pos > 6 || (p < end && !space_tab(s_[p]))) return none;
    std::size_t b = p;
    while (b < end && space_tab(s_[b])) ++b;
    std::size_t e = trim_end(b, end);
    // A closing sequence of #s, after a space (or the whole text).
    std::size_t h = e;
    while (h > b && s_[h - 1] == '#') --h;
    if (h < e && (h == b || space_tab(s_[h - 1]))) e = trim_end(b, h);
    return {b, e};
  }

  struct Fence {
    char c = 0;
    std::size_t length = 0;
  };
  Fence fence_start(Cursor c, std::size_t end) const {
    if (indent(c, end) > 3) return {};
    skip_all_space(c, end);
    std::size_t p = c.pos;
    if (p >= end || (s_[p] != '`' && s_[p] != '~')) return {};
    const char f = s_[p];
    while (p < end && s_[p] == f) ++p;
    if (p - c.pos < 3) return {};
    if (f == '`' && std::string_view(s_).substr(p, end - p).find('`') != std::string_view::npos) return {};
    return {f, p - c.pos};
  }
  bool fence_end(Cursor c, std::size_t end) const {
    if (indent(c, end) > 3) return false;
    skip_all_space(c, end);
    std::size_t p = c.pos;
    while (p < end && s_[p] == fence_.c) ++p;
    return p - c.pos >= fence_.length && blank(p, end);
  }

  struct ListMarker {
    bool found = false;
    bool ordered = false;
    bool one = false;    // ordered, starting at 1
    bool empty = false;  // nothing after the marker
    Cursor content{0, 0};
  };
  ListMarker list_marker(Cursor c, std::size_t end) const {
    ListMarker m;
    if (indent(c, end) > 3) return m;
    skip_all_space(c, end);
    std::size_t p = c.pos;
    if (p < end && (s_[p] == '-' || s_[p] == '+' || s_[p] == '*')) {
      ++p;
    } else {
      while (p < end && ascii_digit(s_[p]) && p - c.pos < 9) ++p;
      if (p == c.pos || p >= end || (s_[p] != '.' && s_[p] != ')')) return m;
      m.ordered = true;
      m.one = std::string_view(s_).substr(c.pos, p - c.pos).find_first_not_of('0') == p - c.pos - 1 && s_[p - 1] == '1';
      ++p;
    }
    if (p < end && !space_tab(s_[p])) return m;
    m.found = true;
    Cursor after{p, c.col + static_cast<int>(p - c.pos)};
    m.empty = blank(p, end);
    const int spaces = indent(after, end);
    if (m.empty || spaces > 4)
      skip_cols(after, end, 1);  // the content is indented code, or on later lines
    else
      skip_cols(after, end, spaces);
    m.content = after;
    return m;
  }

  // The type (1-7) of the HTML block that starts here, or 0.
  int html_block_start(Cursor c, std::size_t end, bool interrupting) const {
    if (indent(c, end) > 3) return 0;
    skip_all_space(c, end);
    const std::size_t p = c.pos;
    if (p >= end || s_[p] != '<') return 0;
    for (std::string_view name : {"script", "pre", "style", "textarea"}) {
      if (starts_with_ci(s_, p + 1, name)) {
        const std::size_t q = p + 1 + name.size();
        if (q >= end || ascii_space(s_[q]) || s_[q] == '>') return 1;
      }
    }
    if (std::string_view(s_).substr(p, 4) == "<!--") return 2;
    if (std::string_view(s_).substr(p, 2) == "<?") return 3;
    if (std::string_view(s_).substr(p, 9) == "<![CDATA[") return 5;
    if (p + 2 < end && s_[p + 1] == '!' && ascii_alpha(s_[p + 2])) return 4;
    std::size_t q = p + 1;
    if (q < end && s_[q] == '/') ++q;
    std::size_t r = q;
    while (r < end && ascii_alnum(s_[r])) ++r;
    std::string name;
    for (std::size_t k = q; k < r; ++k) name += lower_ascii(s_[k]);
    if (kHtmlBlockNames.count(name) &&
        (r >= end || space_tab(s_[r]) || s_[r] == '>' || (s_[r] == '/' && r + 1 < end && s_[r + 1] == '>')))
      return 6;
    if (!interrupting) {
      EndFinder ends;
      const std::size_t tag_end = html_tag_end(s_, p, end, ends);
      if (tag_end != std::string_view::npos && tag_end > p + 1 && (s_[p + 1] == '/' || ascii_alpha(s_[p + 1])) &&
          blank(tag_end, end))
        return 7;
    }
    return 0;
  }
  bool html_block_ends(std::size_t begin, std::size_t end) const {
    const std::string_view line = std::string_view(s_).substr(begin, end - begin);
    switch (html_type_) {
      case 1:
        for (std::string_view close : {"</script>", "</pre>", "</style>", "</textarea>"}) {
          for (std::size_t k = 0; k + close.size() <= line.size(); ++k)
            if (starts_with_ci(line, k, close)) return true;
        }
        return false;
      case 2:
        return line.find("-->") != std::string_view::npos;
      case 3:
        return line.find("?>") != std::string_view::npos;
      case 4:
        return line.find('>') != std::string_view::npos;
      case 5:
        return line.find("]]>") != std::string_view::npos;
      default:
        return false;  // 6 and 7 end at a blank line
    }
  }

  // [label]: destination "title", on one line.
  bool reference_definition(Cursor c, std::size_t end) {
    if (indent(c, end) > 3) return false;
    skip_all_space(c, end);
    std::size_t p = c.pos;
    if (p >= end || s_[p] != '[') return false;
    std::size_t q = p + 1;
    while (q < end && s_[q] != ']') {
      if (s_[q] == '[') return false;
      q += s_[q] == '\\' && q + 1 < end ? 2 : 1;
    }
    if (q >= end || q + 1 >= end || s_[q + 1] != ':' || q - p - 1 > 999) return false;
    const std::string label = normalize_label(std::string_view(s_).substr(p + 1, q - p - 1));
    if (label.empty()) return false;
    std::size_t d = q + 2;
    while (d < end && space_tab(s_[d])) ++d;
    if (d >= end) return false;
    if (s_[d] == '<') {
      ++d;
      while (d < end && s_[d] != '>' && s_[d] != '<') d += s_[d] == '\\' && d + 1 < end ? 2 : 1;
      if (d >= end || s_[d] != '>') return false;
      ++d;
    } else {
      while (d < end && !space_tab(s_[d])) ++d;
    }
    std::size_t t = d;
    while (t < end && space_tab(s_[t])) ++t;
    if (t < end) {
      if (t == d) return false;  // a title needs whitespace before it
      const char open = s_[t];
      const char close = open == '(' ? ')' : open;
      if (open != '"' && open != '\'' && open != '(') return false;
      std::size_t u = t + 1;
      while (u < end && s_[u] != close) u += s_[u] == '\\' && u + 1 < end ? 2 : 1;
      if (u >= end || !blank(u + 1, end)) return false;
    }
    labels.insert(label);
    return true;
  }

  // A row's cells, trimmed, between unescaped pipes (a leading and a trailing pipe are optional).
  std::vector<std::pair<std::size_t, std::size_t>> cells(std::size_t begin, std::size_t end) const {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    while (begin < end && space_tab(s_[begin])) ++begin;
    end = trim_end(begin, end);
    if (begin < end && s_[begin] == '|') ++begin;
    if (end > begin && s_[end - 1] == '|' && (end - 1 == begin || s_[end - 2] != '\\')) --end;
    std::size_t cell = begin;
    for (std::size_t p = begin; p <= end; ++p) {
      if (p < end && s_[p] == '\\') {
        ++p;
        continue;
      }
      if (p == end || s_[p] == '|') {
        std::size_t b = cell, e = p;
        while (b < e && space_tab(s_[b])) ++b;
        e = trim_end(b, e);
        out.push_back({b, e});
        cell = p + 1;
      }
    }
    return out;
  }
  bool has_pipe(std::size_t begin, std::size_t end) const {
    for (std::size_t p = begin; p < end; ++p) {
      if (s_[p] == '\\')
        ++p;
      else if (s_[p] == '|')
        return true;
    }
    return false;
  }
  bool delimiter_row(std::size_t begin, std::size_t end, std::size_t header_cells) const {
    if (!has_pipe(begin, end) && header_cells != 1) return false;
    const auto row = cells(begin, end);
    if (row.size() != header_cells) return false;
    for (const auto& [b, e] : row) {
      std::size_t p = b;
      if (p < e && s_[p] == ':') ++p;
      const std::size_t dashes = p;
      while (p < e && s_[p] == '-') ++p;
      if (p == dashes) return false;
      if (p < e && s_[p] == ':') ++p;
      if (p != e) return false;
    }
    return has_pipe(begin, end);
  }

  // Whether the line at c starts a block that ends a paragraph.
  bool interrupts_paragraph(Cursor c, std::size_t end) const {
    if (indent(c, end) > 3) return false;
    Cursor t = c;
    skip_all_space(t, end);
    if (t.pos < end && s_[t.pos] == '>') return true;
    if (atx_heading(c, end).first != std::string::npos) return true;
    if (fence_start(c, end).c) return true;
    if (thematic_break(c, end)) return true;
    const ListMarker m = list_marker(c, end);
    if (m.found && !m.empty && (!m.ordered || m.one)) return true;
    return html_block_start(c, end, true) != 0;
  }

  // --- leaves

  void close_leaf() {
    if (leaf_ == Leaf::paragraph) blocks.push_back(paragraph_);
    leaf_ = Leaf::none;
  }

  void add_text_block(std::size_t begin, std::size_t end) {
    if (end > begin) blocks.push_back({begin, end, {}});
  }

  void start_paragraph(Cursor c, std::size_t end, bool item_start) {
    skip_all_space(c, end);
    std::size_t b = c.pos;
    // GFM's task list item: "- [ ] text", "- [x] text".
    if (item_start && b + 3 < end && s_[b] == '[' && (s_[b + 1] == ' ' || s_[b + 1] == 'x' || s_[b + 1] == 'X') &&
        s_[b + 2] == ']' && space_tab(s_[b + 3])) {
      b += 4;
      while (b < end && space_tab(s_[b])) ++b;
    }
    leaf_ = Leaf::paragraph;
    paragraph_ = {b, trim_end(b, end), {}};
    paragraph_lines_ = 1;
    paragraph_first_line_ = {c.pos, end};
  }

  void continue_paragraph(const Line& l, std::size_t content, std::size_t end) {
    if (!blank(l.begin, content)) paragraph_.zones.push_back({l.begin, content});
    paragraph_.end = std::max(paragraph_.end, trim_end(content, end));
    ++paragraph_lines_;
  }

  // --- one line

  void line(const Line& l) {
    const std::size_t end = l.end;
    Cursor c{l.begin, 0};
    std::size_t matched = 0;
    for (; matched < containers_.size(); ++matched) {
      const Container& k = containers_[matched];
      if (k.quote) {
        Cursor t = c;
        if (indent(t, end) > 3) break;
        skip_all_space(t, end);
        if (t.pos >= end || s_[t.pos] != '>') break;
        ++t.pos, ++t.col;
        if (t.pos < end && space_tab(s_[t.pos])) skip_cols(t, end, 1);
        c = t;
      } else {
        if (blank(c.pos, end)) continue;
        if (indent(c, end) < k.width) break;
        skip_cols(c, end, k.width);
      }
    }
    const bool all = matched == containers_.size();

    // Leaves that only go on inside all their containers.
    if (leaf_ == Leaf::fenced) {
      if (all) {
        if (fence_end(c, end)) leaf_ = Leaf::none;
        return;
      }
      leaf_ = Leaf::none;
    } else if (leaf_ == Leaf::html) {
      if (all) {
        if (html_type_ >= 6 ? blank(c.pos, end) : html_block_ends(c.pos, end)) leaf_ = Leaf::none;
        return;
      }
      leaf_ = Leaf::none;
    } else if (leaf_ == Leaf::indented) {
      if (all && (blank(c.pos, end) || indent(c, end) >= 4)) return;
      leaf_ = Leaf::none;
    }

    // A lazy continuation line: the paragraph goes on, its containers stay open.
    if (!all) {
      if (leaf_ == Leaf::paragraph && !blank(c.pos, end) && !interrupts_paragraph(c, end) &&
          !list_marker(c, end).found) {
        continue_paragraph(l, c.pos, end);
        return;
      }
      close_leaf();
      containers_.resize(matched);
    }

    // New containers.
    bool opened = false, item_start = false;
    const bool in_paragraph = leaf_ == Leaf::paragraph;
    while (indent(c, end) <= 3) {
      Cursor t = c;
      skip_all_space(t, end);
      if (t.pos < end && s_[t.pos] == '>') {
        close_leaf();
        ++t.pos, ++t.col;
        if (t.pos < end && space_tab(s_[t.pos])) skip_cols(t, end, 1);
        containers_.push_back({true, 0});
        c = t;
        opened = true;
        item_start = false;
        continue;
      }
      if (thematic_break(c, end)) break;
      if (in_paragraph && !opened && setext_underline(c, end)) break;
      const ListMarker m = list_marker(c, end);
      if (!m.found) break;
      if (in_paragraph && !opened && (m.empty || (m.ordered && !m.one))) break;
      close_leaf();
      containers_.push_back({false, m.content.col - c.col});
      c = m.content;
      opened = true;
      item_start = true;
      if (m.empty) break;
    }

    if (blank(c.pos, end)) {
      close_leaf();
      return;
    }
    if (leaf_ == Leaf::paragraph) {
      if (setext_underline(c, end)) {
        close_leaf();
        return;
      }
      if (paragraph_lines_ == 1 && paragraph_.zones.empty()) {
        const auto header = cells(paragraph_first_line_.first, paragraph_first_line_.second);
        if (has_pipe(paragraph_first_line_.first, paragraph_first_line_.second) &&
            delimiter_row(c.pos, end, header.size())) {
          for (const auto& [b, e] : header) add_text_block(b, e);
          leaf_ = Leaf::table;
          return;
        }
      }
      if (!interrupts_paragraph(c, end)) {
        continue_paragraph(l, c.pos, end);
        return;
      }
      close_leaf();
    }
    if (leaf_ == Leaf::table) {
      if (!interrupts_paragraph(c, end)) {
        for (const auto& [b, e] : cells(c.pos, end)) add_text_block(b, e);
        return;
      }
      leaf_ = Leaf::none;
    }

    // A new leaf.
    if (indent(c, end) >= 4) {
      leaf_ = Leaf::indented;
      return;
    }
    if (const Fence f = fence_start(c, end); f.c) {
      fence_ = f;
      leaf_ = Leaf::fenced;
      return;
    }
    if (const auto h = atx_heading(c, end); h.first != std::string::npos) {
      add_text_block(h.first, h.second);
      return;
    }
    if (thematic_break(c, end)) return;
    if (const int type = html_block_start(c, end, false)) {
      html_type_ = type;
      Cursor t = c;
      skip_all_space(t, end);
      if (type >= 6 || !html_block_ends(t.pos + 1, end)) leaf_ = Leaf::html;
      return;
    }
    if (reference_definition(c, end)) return;
    start_paragraph(c, end, item_start);
  }

  bool setext_underline(Cursor c, std::size_t end) const {
    if (indent(c, end) > 3) return false;
    skip_all_space(c, end);
    std::size_t p = c.pos;
    if (p >= end || (s_[p] != '=' && s_[p] != '-')) return false;
    const char m = s_[p];
    while (p < end && s_[p] == m) ++p;
    return blank(p, end);
  }

  const std::string& s_;
  std::vector<Line> lines_;
  std::vector<Container> containers_;
  Leaf leaf_ = Leaf::none;
  TextBlock paragraph_;
  std::size_t paragraph_lines_ = 0;
  std::pair<std::size_t, std::size_t> paragraph_first_line_;
  Fence fence_;
  int html_type_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Inlines, within one text block.

class InlineParser {
 public:
  InlineParser(const std::string& s, const TextBlock& block, const std::unordered_set<std::string>& labels)
      : s_(s), b_(block.begin), e_(block.end), zones_(block.zones), labels_(labels) {
    // Backtick runs, for code spans: where each run of each length is.
    for (std::size_t p = b_; p < e_;) {
      if (s_[p] != '`') {
        ++p;
        continue;
      }
      std::size_t q = p;
      while (q < e_ && s_[q] == '`') ++q;
      backtick_runs_[q - p].push_back(p);
      p = q;
    }
  }

  Segment parse() {
    std::size_t p = b_;
    std::size_t zone = 0;
    while (p < e_) {
      if (zone < zones_.size() && p >= zones_[zone].first) {
        p = std::max(p, zones_[zone].second);
        ++zone;
        continue;
      }
      const char c = s_[p];
      switch (c) {
        case '\\':
          if (p + 1 < e_ && (s_[p + 1] == '\n' || s_[p + 1] == '\r')) {
            marks_.push_back({p, p + 1, Mark::Kind::empty, -1});  // a hard line break
            p += 1;
          } else {
            p += p + 1 < e_ && ascii_punct(static_cast<unsigned char>(s_[p + 1])) ? 2 : 1;
          }
          break;
        case '`':
          p = code_span(p);
          break;
        case '<':
          p = angle(p);
          break;
        case '!':
          if (p + 1 < e_ && s_[p + 1] == '[') {
            brackets_.push_back({p, true, true, delimiters_.size()});
            p += 2;
          } else {
            ++p;
          }
          break;
        case '[':
          brackets_.push_back({p, false, true, delimiters_.size()});
          ++p;
          break;
        case ']':
          p = close_bracket(p);
          break;
        case '*':
        case '_':
        case '~':
          p = delimiter_run(p);
          break;
        case ' ': {
          std::size_t q = p;
          while (q < e_ && s_[q] == ' ') ++q;
          if (q - p >= 2 && q < e_ && (s_[q] == '\n' || s_[q] == '\r')) marks_.push_back({p, q, Mark::Kind::empty, -1});
          p = q;
          break;
        }
        default:
          ++p;
      }
    }
    process_emphasis(0);
    return assemble();
  }

 private:
  struct Mark {
    enum class Kind { open, close, empty };
    std::size_t begin, end;  // its source
    Kind kind;
    int id;  // open/close: the element's; empty: -1, or -2 for container markup (a text span)
  };
  struct Delimiter {
    char c;
    std::size_t pos;     // where the unused part of the run starts
    std::size_t length;  // unused characters
    std::size_t original;
    bool can_open, can_close;
    bool removed = false;
  };
  struct Bracket {
    std::size_t pos;
    bool image;
    bool active;
    std::size_t delimiter_bottom;  // delimiters from here on are inside the brackets
  };

  // --- characters around a position

  bool zone_end(std::size_t p) const {
    const auto it =
        std::upper_bound(zones_.begin(), zones_.end(), p,
                         [](std::size_t v, const std::pair<std::size_t, std::size_t>& z) { return v < z.first; });
    return it != zones_.begin() && std::prev(it)->second == p;
  }
  char32_t before(std::size_t p) const {
    if (p <= b_ || zone_end(p)) return '\n';
    std::size_t q = p - 1;
    while (q > b_ && (static_cast<unsigned char>(s_[q]) & 0xC0) == 0x80) --q;
    return decode_utf8_at(std::string_view(s_).substr(0, e_), q).code_point;
  }
  char32_t after(std::size_t p) const {
    if (p >= e_) return '\n';
    return decode_utf8_at(std::string_view(s_).substr(0, e_), p).code_point;
  }

  // --- code spans, autolinks, inline HTML

  std::size_t code_span(std::size_t p) {
    std::size_t q = p;
    while (q < e_ && s_[q] == '`') ++q;
    const std::size_t n = q - p;
    const auto runs = backtick_runs_.find(n);
    if (runs != backtick_runs_.end()) {
      const auto it = std::upper_bound(runs->second.begin(), runs->second.end(), p);
      if (it != runs->second.end() && *it >= q) {
        marks_.push_back({p, *it + n, Mark::Kind::empty, -1});
        return *it + n;
      }
    }
    return q;  // no closing run: the backticks are text
  }

  std::size_t angle(std::size_t p) {
    // An autolink: <scheme:...> or <address@host>.
    std::size_t q = p + 1;
    if (q < e_ && ascii_alpha(s_[q])) {
      std::size_t r = q;
      while (r < e_ && (ascii_alnum(s_[r]) || s_[r] == '+' || s_[r] == '.' || s_[r] == '-')) ++r;
      if (r < e_ && s_[r] == ':' && r - q >= 2 && r - q <= 32) {
        std::size_t t = r + 1;
        while (t < e_ && s_[t] != '>' && s_[t] != '<' && !ascii_space(s_[t]) &&
               static_cast<unsigned char>(s_[t]) >= 0x20)
          ++t;
        if (t < e_ && s_[t] == '>') {
          marks_.push_back({p, t + 1, Mark::Kind::empty, -1});
          return t + 1;
        }
      }
    }
    {
      std::size_t t = q;
      while (t < e_ &&
             (ascii_alnum(s_[t]) || std::string_view(".!#$%&'*+/=?^_`{|}~-").find(s_[t]) != std::string_view::npos))
        ++t;
      if (t > q && t < e_ && s_[t] == '@') {
        std::size_t u = t + 1;
        bool label_start = true, ok = false;
        while (u < e_ && (ascii_alnum(s_[u]) || s_[u] == '-' || s_[u] == '.')) {
          if (s_[u] == '.') {
            if (label_start) break;
            label_start = true;
          } else {
            label_start = false;
            ok = true;
          }
          ++u;
        }
        if (ok && !label_start && u < e_ && s_[u] == '>') {
          marks_.push_back({p, u + 1, Mark::Kind::empty, -1});
          return u + 1;
        }
      }
    }
    const std::size_t end = html_tag_end(s_, p, e_, ends_);
    if (end != std::string_view::npos) {
      marks_.push_back({p, end, Mark::Kind::empty, -1});
      return end;
    }
    return p + 1;
  }

  // --- links and images

  // After "](": the destination and title and ")", or npos.
  std::size_t inline_link_end(std::size_t p) const {
    std::size_t q = skip_ascii_space(s_, p, e_);
    if (q < e_ && s_[q] == '<') {
      ++q;
      while (q < e_ && s_[q] != '>' && s_[q] != '\n' && s_[q] != '\r' && s_[q] != '<')
        q += s_[q] == '\\' && q + 1 < e_ ? 2 : 1;
      if (q >= e_ || s_[q] != '>') return std::string::npos;
      ++q;
    } else {
      int depth = 0;
      while (q < e_ && !ascii_space(s_[q]) && static_cast<unsigned char>(s_[q]) >= 0x20) {
        if (s_[q] == '\\' && q + 1 < e_ && ascii_punct(static_cast<unsigned char>(s_[q + 1]))) {
          q += 2;
          continue;
        }
        if (s_[q] == '(') {
          if (++depth > 32) return std::string::npos;
        } else if (s_[q] == ')') {
          if (depth == 0) break;
          --depth;
        }
        ++q;
      }
      if (depth != 0) return std::string::npos;
    }
    const std::size_t before_title = q;
    q = skip_ascii_space(s_, q, e_);
    if (q < e_ && q > before_title && (s_[q] == '"' || s_[q] == '\'' || s_[q] == '(')) {
      const char close = s_[q] == '(' ? ')' : s_[q];
      ++q;
      while (q < e_ && s_[q] != close) {
        if (close == ')' && s_[q] == '(') return std::string::npos;
        q += s_[q] == '\\' && q + 1 < e_ ? 2 : 1;
      }
      if (q >= e_) return std::string::npos;
      q = skip_ascii_space(s_, q + 1, e_);
    }
    return q < e_ && s_[q] == ')' ? q + 1 : std::string::npos;
  }

  // After "]" at p: "[label]" with the label's end, or npos.
  std::size_t label_end(std::size_t p, std::string& label) const {
    if (p >= e_ || s_[p] != '[') return std::string::npos;
    std::size_t q = p + 1;
    while (q < e_ && s_[q] != ']') {
      if (s_[q] == '[') return std::string::npos;
      q += s_[q] == '\\' && q + 1 < e_ ? 2 : 1;
      if (q - p > 1000) return std::string::npos;
    }
    if (q >= e_) return std::string::npos;
    label = std::string(s_, p + 1, q - p - 1);
    return q + 1;
  }

  std::size_t close_bracket(std::size_t p) {
    if (brackets_.empty()) return p + 1;
    const Bracket opener = brackets_.back();
    brackets_.pop_back();
    if (!opener.active) return p + 1;
    const std::size_t text_begin = opener.pos + (opener.image ? 2 : 1);
    std::size_t end = std::string::npos;
    if (p + 1 < e_ && s_[p + 1] == '(') end = inline_link_end(p + 2);  // [text](url "title")
    if (end == std::string::npos) {
      std::string label;
      const std::size_t after_label = label_end(p + 1, label);
      // (a label is at most 999 characters: longer text is no label, and is not looked at again and
      // again for brackets nested deep)
      const bool text_defined =
          !labels_.empty() && p - text_begin <= 999 &&
          labels_.count(normalize_label(std::string_view(s_).substr(text_begin, p - text_begin))) > 0;
      if (after_label == std::string::npos) {
        if (text_defined) end = p + 1;  // [text], the text a label
      } else if (normalize_label(label).empty()) {
        if (text_defined) end = after_label;  // [text][]
      } else if (labels_.count(normalize_label(label))) {
        end = after_label;  // [text][label]
      }
    }
    if (end == std::string::npos) return p + 1;
    if (opener.image) {  // the whole image is kept as it is
      remove_delimiters(opener.delimiter_bottom);
      while (!marks_.empty() && marks_.back().begin >= opener.pos) marks_.pop_back();
      marks_.push_back({opener.pos, end, Mark::Kind::empty, -1});
      return end;
    }
    process_emphasis(opener.delimiter_bottom);
    const int id = next_id_++;
    marks_.push_back({opener.pos, opener.pos + 1, Mark::Kind::open, id});
    marks_.push_back({p, end, Mark::Kind::close, id});
    for (Bracket& b : brackets_)
      if (!b.image) b.active = false;  // no links inside links
    return end;
  }

  // --- emphasis

  std::size_t delimiter_run(std::size_t p) {
    const char c = s_[p];
    std::size_t q = p;
    while (q < e_ && s_[q] == c) ++q;
    const char32_t prev = before(p), next = after(q);
    const bool next_space = unicode_space(next), prev_space = unicode_space(prev);
    const bool left = !next_space && (!unicode_punct(next) || prev_space || unicode_punct(prev));
    const bool right = !prev_space && (!unicode_punct(prev) || next_space || unicode_punct(next));
    bool can_open = left, can_close = right;
    if (c == '_') {
      can_open = left && (!right || unicode_punct(prev));
      can_close = right && (!left || unicode_punct(next));
    }
    if (c == '~' && q - p != 2) return q;  // strikethrough is ~~x~~
    if (can_open || can_close) {
      jump_.push_back(delimiters_.size() - 1);  // wraps to kNone for the first
      delimiters_.push_back({c, p, q - p, q - p, can_open, can_close});
    }
    return q;
  }

  // The nearest delimiter before index i that is not removed, or kNone; removed ones are skipped
  // in one step next time (removal is for good).
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t alive_before(std::size_t i) {
    std::size_t j = jump_[i];
    std::vector<std::size_t> path;
    while (j != kNone && delimiters_[j].removed) {
      path.push_back(j);
      j = jump_[j];
    }
    for (std::size_t k : path) jump_[k] = j;
    if (!path.empty()) jump_[i] = j;
    return j;
  }

  void remove_delimiters(std::size_t bottom) {
    for (std::size_t i = bottom; i < delimiters_.size(); ++i) delimiters_[i].removed = true;
  }

  // CommonMark's "process emphasis" over the delimiters from `bottom` on.
  void process_emphasis(std::size_t bottom) {
    // openers_bottom, per delimiter character, closer length mod 3 and whether the closer can open.
    std::map<std::tuple<char, std::size_t, bool>, std::size_t> openers_bottom;
    for (std::size_t ci = bottom; ci < delimiters_.size(); ++ci) {
      Delimiter* closer = &delimiters_[ci];
      if (closer->removed || !closer->can_close) continue;
      while (closer->length > 0) {
        const auto key = std::make_tuple(closer->c, closer->original % 3, closer->can_open);
        const auto found_bottom = openers_bottom.find(key);
        const std::size_t low = std::max(bottom, found_bottom == openers_bottom.end() ? bottom : found_bottom->second);
        std::size_t oi = ci;
        bool found = false;
        while (oi > low) {
          oi = alive_before(oi);
          if (oi == kNone || oi < low) break;
          const Delimiter& o = delimiters_[oi];
          if (o.c != closer->c || !o.can_open || o.length == 0) continue;
          if (o.c == '~') {
            if (o.length != 2 || closer->length != 2) continue;
          } else if ((o.can_close || closer->can_open) && (o.original + closer->original) % 3 == 0 &&
                     !(o.original % 3 == 0 && closer->original % 3 == 0)) {
            continue;
          }
          found = true;
          break;
        }
        if (!found) {
          openers_bottom[key] = ci;
          if (!closer->can_open) closer->removed = true;
          break;
        }
        Delimiter& opener = delimiters_[oi];
        const std::size_t n = closer->c == '~' ? 2 : (opener.length >= 2 && closer->length >= 2 ? 2 : 1);
        const int id = next_id_++;
        marks_.push_back({opener.pos + opener.length - n, opener.pos + opener.length, Mark::Kind::open, id});
        marks_.push_back({closer->pos, closer->pos + n, Mark::Kind::close, id});
        for (std::size_t k = oi + 1; k < ci; ++k) delimiters_[k].removed = true;
        opener.length -= n;
        if (opener.length == 0) opener.removed = true;
        closer->pos += n;
        closer->length -= n;
      }
      if (closer->length == 0) closer->removed = true;
    }
    remove_delimiters(bottom);
  }

  // --- the segment

  Segment assemble() {
    std::vector<Mark> marks = marks_;
    std::sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.begin < b.begin; });
    // Container markup inside a mark's source belongs to the mark; the rest is text spans.
    std::vector<Mark> all;
    std::size_t m = 0;
    for (const auto& [zb, ze] : zones_) {
      while (m < marks.size() && marks[m].begin < zb) all.push_back(marks[m++]);
      if (!all.empty() && all.back().end > zb) continue;
      all.push_back({zb, ze, Mark::Kind::empty, -2});
    }
    while (m < marks.size()) all.push_back(marks[m++]);

    Segment seg;
    std::vector<int> open_ids;
    std::vector<std::size_t> open_spans;
    std::size_t at = b_;
    for (const Mark& mark : all) {
      seg.text.append(s_, at, mark.begin - at);
      const int parent = open_spans.empty() ? -1 : static_cast<int>(open_spans.back());
      const std::string markup(s_, mark.begin, mark.end - mark.begin);
      switch (mark.kind) {
        case Mark::Kind::open:
          seg.spans.push_back({Span::Kind::element, seg.text.size(), seg.text.size(), markup, "", parent});
          open_spans.push_back(seg.spans.size() - 1);
          open_ids.push_back(mark.id);
          break;
        case Mark::Kind::close:
          if (open_ids.empty() || open_ids.back() != mark.id) throw Error("Markdown: internal error: crossed spans");
          seg.spans[open_spans.back()].end = seg.text.size();
          seg.spans[open_spans.back()].close = markup;
          open_spans.pop_back();
          open_ids.pop_back();
          break;
        case Mark::Kind::empty:
          // Code spans, images, autolinks and hard breaks stand between words as a word would.
          seg.spans.push_back({mark.id == -2 ? Span::Kind::text : Span::Kind::empty_element, seg.text.size(),
                               seg.text.size(), markup, "", parent, mark.id != -2});
          break;
      }
      at = mark.end;
    }
    seg.text.append(s_, at, e_ - at);
    if (!open_ids.empty()) throw Error("Markdown: internal error: an unclosed span");
    return seg;
  }

  const std::string& s_;
  std::size_t b_, e_;
  const std::vector<std::pair<std::size_t, std::size_t>>& zones_;
  const std::unordered_set<std::string>& labels_;
  std::map<std::size_t, std::vector<std::size_t>> backtick_runs_;
  EndFinder ends_;
  std::vector<Mark> marks_;
  std::vector<Delimiter> delimiters_;
  std::vector<std::size_t> jump_;  // per delimiter: an earlier one, every one between removed
  std::vector<Bracket> brackets_;
  int next_id_ = 0;
};

bool blank_text(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const DecodedCodePoint cp = decode_utf8_at(text, i);
    if (!unicode_space(cp.code_point) && cp.code_point != 0xFEFF) return false;
    i += cp.length;
  }
  return true;
}

}  // namespace

Document read_markdown(const std::string& markdown) {
  if (const auto bad = find_invalid_utf8(markdown))
    throw Error("Markdown: invalid UTF-8 at byte " + std::to_string(*bad + 1));
  if (const std::size_t nul = markdown.find('\0'); nul != std::string::npos)
    throw Error("binary data, not Markdown, at byte " + std::to_string(nul + 1));
  BlockParser blocks(markdown);
  blocks.parse();
  Document d;
  d.format = "markdown";
  d.escape = Escape::none;
  std::size_t at = 0;
  for (const TextBlock& block : blocks.blocks) {
    if (block.begin < at || block.end <= block.begin) continue;
    Segment segment = InlineParser(markdown, block, blocks.labels).parse();
    if (blank_text(segment.text)) continue;  // an image alone, a code span alone: nothing to translate
    if (block.begin > at) d.pieces.push_back({markdown.substr(at, block.begin - at), -1});
    d.pieces.push_back({"", static_cast<int>(d.segments.size())});
    d.segments.push_back(std::move(segment));
    at = block.end;
  }
  if (at < markdown.size()) d.pieces.push_back({markdown.substr(at), -1});
  return d;
}

}  // namespace attn::document
