// HTML in, HTML out, spliced from the source.
//
// Gumbo parses the input the HTML5 way; its tree gives every start tag, end tag and comment that
// the HTML5 tokenizer found, with their exact source text (original_tag, original_end_tag,
// original_text). Those tokens, sorted by offset, are walked in source order; the bytes between
// them are text, or markup that the tree builder ignored (the doctype, a stray end tag), which a
// small lexer finds. Text is taken from the source (not from Gumbo's text nodes, which fold CR LF
// and stretch over ignored tags) and its character references decoded, Gumbo decoding each one.
//
// The walk keeps its own stack of open inline elements for the run of inline content it is in:
// the output of a translated run is well-formed whatever the source was (an end tag the source
// left out is written, a stray one is dropped, each with a warning), while everything outside the
// runs is the source's own bytes. The tree decides what the source cannot say alone: which
// element is which, its attributes (translate="no", class="notranslate"), where an element the
// source did not close ends (for the content that is not translated), and whether an inline
// element holds a block (<a href><div>…</div></a>: then it is treated as a block itself).
//
// Attributes are never translated (alt, title, placeholder and aria-label would be a later
// addition: they would need segments inside the literal markup).
#include "document/html_document.h"

#include <gumbo.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"

namespace attn::document {
namespace {

// ---------------------------------------------------------------------------------------------
// Names and what they are.

bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// The tag name of a start or end tag's text ("<B class=x>" -> "B", "</i >" -> "i"), as written.
std::string_view written_tag_name(std::string_view tag) {
  std::size_t i = 1;
  if (i < tag.size() && tag[i] == '/') ++i;
  std::size_t j = i;
  while (j < tag.size() && !ascii_space(tag[j]) && tag[j] != '/' && tag[j] != '>') ++j;
  return tag.substr(i, j - i);
}

// Inline elements whose content is translated (spans); void inline elements (empty elements); inline
// elements whose content is not translated (one empty element holding all their source: <code> in
// a sentence, a script); blocks whose content is not translated (literal pieces). Every other known
// HTML element is a block (<noscript> too: Gumbo reads its content as markup, as a browser without
// scripts shows it, and it is translated); an unknown name (a custom element) is inline.
const std::unordered_set<std::string_view> kInline = {
    "a",      "abbr",    "acronym",  "audio",  "b",      "bdi", "bdo", "big",  "blink", "canvas", "cite", "data",
    "del",    "dfn",     "em",       "font",   "i",      "ins", "kbd", "map",  "mark",  "meter",  "nobr", "object",
    "output", "picture", "progress", "q",      "rb",     "rp",  "rt",  "rtc",  "ruby",  "s",      "samp", "select",
    "slot",   "small",   "span",     "strike", "strong", "sub", "sup", "time", "tt",    "u",      "var",  "video"};
const std::unordered_set<std::string_view> kVoidInline = {"area",   "br",    "embed",  "image", "img", "input",
                                                          "keygen", "param", "source", "track", "wbr"};
const std::unordered_set<std::string_view> kOpaqueInline = {"code",   "iframe", "math", "noembed",  "noframes",
                                                            "script", "style",  "svg",  "template", "textarea"};
const std::unordered_set<std::string_view> kOpaqueBlock = {"listing", "plaintext", "pre", "xmp"};
// Elements whose content the tokenizer reads as text (no tags inside).
const std::unordered_set<std::string_view> kRawText = {"iframe", "noembed",  "noframes", "plaintext", "script",
                                                       "style",  "textarea", "title",    "xmp"};

bool known_html_name(const std::string& name) {
  return gumbo_tagn_enum(name.c_str(), static_cast<unsigned int>(name.size())) != GUMBO_TAG_UNKNOWN;
}

enum class Role { inline_element, void_element, opaque_inline, opaque_block, block };

// What an element of this (lower-case) name is, by its name alone.
Role role_by_name(const std::string& name) {
  if (kVoidInline.count(name)) return Role::void_element;
  if (kOpaqueInline.count(name)) return Role::opaque_inline;
  if (kOpaqueBlock.count(name)) return Role::opaque_block;
  if (kInline.count(name) || !known_html_name(name)) return Role::inline_element;
  return Role::block;
}

bool breaks_runs(Role r) { return r == Role::block || r == Role::opaque_block; }

// ---------------------------------------------------------------------------------------------
// Positions for warnings: lines and columns (characters) from 1; CR LF, CR and LF end a line.

class Positions {
 public:
  explicit Positions(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')))
        starts_.push_back(i + 1);
    }
  }
  std::string at(std::size_t offset) const {
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), offset) - 1;
    std::size_t column = 1;
    for (std::size_t i = *it; i < offset; ++i)
      if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;
    return "line " + std::to_string(it - starts_.begin() + 1) + ", column " + std::to_string(column);
  }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
};

// ---------------------------------------------------------------------------------------------
// Named character references, decoded by Gumbo itself: each one alone ("&eacute;", "&amp") parsed
// as a document of its own, remembered.

struct GumboOutputDeleter {
  void operator()(GumboOutput* o) const { gumbo_destroy_output(&kGumboDefaultOptions, o); }
};
using GumboOutputPtr = std::unique_ptr<GumboOutput, GumboOutputDeleter>;

GumboOptions parse_options() {
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;  // the errors are not read: do not keep them
  return options;
}

class ReferenceDecoder {
 public:
  // `reference`: "&" and the letters and digits after it, with the ";" that ends them if any.
  const std::string& decode(std::string_view reference) {
    auto it = cache_.find(std::string(reference));
    if (it != cache_.end()) return it->second;
    const GumboOptions options = parse_options();
    GumboOutputPtr out(gumbo_parse_with_options(&options, reference.data(), reference.size()));
    std::string text(reference);
    std::vector<const GumboNode*> stack{out->document};
    while (!stack.empty()) {  // the first text node, in <body>
      const GumboNode* n = stack.back();
      stack.pop_back();
      if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE) {
        text = n->v.text.text;
        break;
      }
      const GumboVector* children = n->type == GUMBO_NODE_DOCUMENT ? &n->v.document.children
                                    : (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE)
                                        ? &n->v.element.children
                                        : nullptr;
      if (children)
        for (unsigned i = children->length; i-- > 0;) stack.push_back(static_cast<const GumboNode*>(children->data[i]));
    }
    if (find_invalid_utf8(text)) text = reference;  // never trust a decoding that is not UTF-8
    return cache_.emplace(std::string(reference), std::move(text)).first->second;
  }

 private:
  std::unordered_map<std::string, std::string> cache_;
};

bool ascii_alnum(char c) { return ascii_alpha(c) || (c >= '0' && c <= '9'); }

// A numeric reference's code point, as HTML5 maps it: none, a surrogate or one beyond U+10FFFF is
// U+FFFD; 0x80-0x9F are windows-1252's characters (Gumbo's own decoding of these is not used: it
// overflows on long digit strings).
char32_t numeric_reference(char32_t value) {
  static const char32_t windows_1252[32] = {0x20AC, 0x81,   0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                            0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,   0x017D, 0x8F,
                                            0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                            0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,   0x017E, 0x0178};
  if (value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0xFFFD;
  if (value >= 0x80 && value <= 0x9F) return windows_1252[value - 0x80];
  return value;
}

// ---------------------------------------------------------------------------------------------
// The source as tokens in order, tiling it.

struct Token {
  enum class Kind { start, end, comment, text, markup } kind;
  std::size_t begin = 0, end = 0;
  const GumboNode* node = nullptr;  // start and end tags the tree has
  std::string name;                 // tags: lower-case name ("" for a doctype or other markup)
  bool end_tag = false;             // markup: an end tag
  bool raw = false;                 // text: the content of an element read as text (<title>)
};

const GumboVector* children_of(const GumboNode* n) {
  if (n->type == GUMBO_NODE_DOCUMENT) return &n->v.document.children;
  if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) return &n->v.element.children;
  return nullptr;
}

bool is_element(const GumboNode* n) { return n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE; }

bool is_clone(const GumboNode* n) {
  return (n->parse_flags &
          (GUMBO_INSERTION_RECONSTRUCTED_FORMATTING_ELEMENT | GUMBO_INSERTION_ADOPTION_AGENCY_CLONED)) != 0;
}

// The lower-case name of an element of the tree (custom elements: from its source tag).
std::string node_name(const GumboNode* n) {
  const GumboElement& e = n->v.element;
  if (e.tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(e.tag);
  const auto name = [](const GumboStringPiece& text) {
    std::string_view tag(text.data, text.length);
    while (tag.size() > 3 && tag.substr(0, 3) == "</>") tag.remove_prefix(3);  // see token_range
    return lower(written_tag_name(tag));
  };
  if (e.original_tag.length) return name(e.original_tag);
  if (e.original_end_tag.length) return name(e.original_end_tag);
  return "";
}

// Where the tag that starts at `i` ('<' and a letter, or "</" and a letter) ends (one past its '>'),
// by the HTML5 tokenizer's rules for tag names and attributes; npos if it does not end before `end`.
std::size_t lex_tag(std::string_view s, std::size_t i, std::size_t end) {
  std::size_t j = i + 1;
  if (j < end && s[j] == '/') ++j;
  while (j < end && !ascii_space(s[j]) && s[j] != '/' && s[j] != '>') ++j;
  enum { before_name, name, after_name, before_value, quoted, unquoted, after_value, self_closing } st = before_name;
  char quote = 0;
  while (j < end) {
    const char c = s[j];
    switch (st) {
      case before_name:
        if (c == '>') return j + 1;
        if (c == '/')
          st = self_closing;
        else if (!ascii_space(c))
          st = name;
        break;
      case name:
        if (c == '>') return j + 1;
        if (ascii_space(c))
          st = after_name;
        else if (c == '/')
          st = self_closing;
        else if (c == '=')
          st = before_value;
        break;
      case after_name:
        if (c == '>') return j + 1;
        if (c == '/')
          st = self_closing;
        else if (c == '=')
          st = before_value;
        else if (!ascii_space(c))
          st = name;
        break;
      case before_value:
        if (c == '>') return j + 1;
        if (c == '"' || c == '\'')
          st = quoted, quote = c;
        else if (!ascii_space(c))
          st = unquoted;
        break;
      case quoted:
        if (c == quote) st = after_value;
        break;
      case unquoted:
        if (c == '>') return j + 1;
        if (ascii_space(c)) st = before_name;
        break;
      case after_value:
        if (c == '>') return j + 1;
        if (c == '/')
          st = self_closing;
        else if (ascii_space(c))
          st = before_name;
        else
          st = name;  // a missing space: the next attribute's name starts here
        break;
      case self_closing:
        if (c == '>') return j + 1;
        st = ascii_space(c) ? before_name : name;
        break;
    }
    ++j;
  }
  return std::string_view::npos;
}

// The bytes between two tokens of the tree: text, and markup the tree builder ignored.
void lex_gap(std::string_view s, std::size_t begin, std::size_t end, bool raw, std::vector<Token>& out) {
  std::size_t text_begin = begin, i = begin;
  const auto flush_text = [&](std::size_t upto) {
    if (upto > text_begin) out.push_back({Token::Kind::text, text_begin, upto, nullptr, "", false, raw});
  };
  while (!raw && i < end) {
    i = s.find('<', i);
    if (i == std::string_view::npos || i >= end) break;
    const char next = i + 1 < end ? s[i + 1] : '\0';
    const char after = i + 2 < end ? s[i + 2] : '\0';
    Token markup{Token::Kind::markup, i, 0, nullptr, "", false};
    if (ascii_alpha(next) || (next == '/' && ascii_alpha(after))) {
      const std::size_t j = lex_tag(s, i, end);
      if (j == std::string_view::npos) break;  // an unfinished tag: the rest is text
      markup.end = j;
      markup.end_tag = next == '/';
      markup.name = lower(written_tag_name(s.substr(i, j - i)));
    } else if (next == '/' && after == '>') {
      markup.end = i + 3;  // "</>", which the tokenizer drops
      markup.end_tag = true;
    } else if (next == '!' || next == '?' || next == '/') {
      const std::size_t j = s.find('>', i);
      if (j == std::string_view::npos || j >= end) break;
      markup.end = j + 1;  // the doctype, or a declaration the tree builder ignored
    } else {
      ++i;  // a '<' that starts no tag: text
      continue;
    }
    flush_text(i);
    out.push_back(std::move(markup));
    i = text_begin = out.back().end;
  }
  flush_text(end);
}

// ---------------------------------------------------------------------------------------------
// The reader.

class HtmlReader {
 public:
  explicit HtmlReader(const std::string& html) : src_(html), positions_(html) {}

  Document read() {
    const GumboOptions options = parse_options();
    GumboOutputPtr out(gumbo_parse_with_options(&options, src_.data(), src_.size()));
    collect(out->document);
    doc_.format = "html";
    doc_.escape = Escape::html;
    walk();
    flush_literal();
    finish_warnings();
    return std::move(doc_);
  }

 private:
  // A run of inline content, item by item.
  struct Item {
    enum class Kind { text, open, close, empty, stray } kind;
    std::size_t begin = 0, end = 0;  // source bytes
    std::string name;                // open/close: lower-case name
    std::string open;                // empty: the markup (the source's, or a repair)
    std::string repair;              // empty: the warning its repair needs
  };

  std::string_view source(std::size_t begin, std::size_t end) const {
    return std::string_view(src_).substr(begin, end - begin);
  }
  std::size_t offset_of(const char* p) const { return static_cast<std::size_t>(p - src_.data()); }

  // The source range of a token's text. Gumbo starts a token's text where the previous emitted
  // token ended, so a "</>" its tokenizer dropped in between is at the front of the next one's:
  // that goes back to the bytes between tokens.
  std::pair<std::size_t, std::size_t> token_range(const GumboStringPiece& text) const {
    std::size_t begin = offset_of(text.data);
    const std::size_t end = begin + text.length;
    while (end - begin > 3 && src_.compare(begin, 3, "</>") == 0) begin += 3;
    return {begin, end};
  }

  // ---- the tree's tokens, and what each element is

  void collect(const GumboNode* root) {
    std::vector<Token> tree;
    std::vector<const GumboNode*> stack{root}, order;
    while (!stack.empty()) {
      const GumboNode* n = stack.back();
      stack.pop_back();
      if (n->type == GUMBO_NODE_COMMENT) {
        if (n->v.text.original_text.length) {
          const auto [b, e] = token_range(n->v.text.original_text);
          tree.push_back({Token::Kind::comment, b, e, n, "", false});
        }
        continue;
      }
      if (is_element(n)) {
        order.push_back(n);
        const GumboElement& e = n->v.element;
        const std::string name = node_name(n);
        if (e.original_tag.length) {
          const auto [b, end] = token_range(e.original_tag);
          tree.push_back({Token::Kind::start, b, end, n, name, false});
        }
        // Gumbo records the token that closed an element as its end tag, whatever its name.
        if (e.original_end_tag.length) {
          const auto [b, end] = token_range(e.original_end_tag);
          if (lower(written_tag_name(source(b, end))) == name) {
            tree.push_back({Token::Kind::end, b, end, n, name, true});
            has_end_tag_.insert(n);
          }
        }
      }
      if (const GumboVector* children = children_of(n))
        for (unsigned i = children->length; i-- > 0;) stack.push_back(static_cast<const GumboNode*>(children->data[i]));
    }
    // Clones of an element (formatting elements reopened by the parser) carry its tags too: the
    // token goes to the element itself.
    std::stable_sort(tree.begin(), tree.end(), [](const Token& a, const Token& b) {
      if (a.begin != b.begin) return a.begin < b.begin;
      return !is_clone(a.node) && is_clone(b.node);
    });
    std::size_t at = 0;
    for (Token& t : tree) {
      if (t.begin < at || t.end > src_.size()) continue;  // a duplicate, or overlapping one kept
      if (t.begin > at) lex_gap(src_, at, t.begin, raw_gap(), tokens_);
      at = t.end;
      tokens_.push_back(std::move(t));
    }
    if (at < src_.size()) lex_gap(src_, at, src_.size(), raw_gap(), tokens_);
    classify(order);
  }

  // Whether the bytes after the last token are the content of an element read as text.
  bool raw_gap() const {
    if (tokens_.empty()) return false;
    const Token& t = tokens_.back();
    return t.kind == Token::Kind::start && t.node && t.node->v.element.tag_namespace == GUMBO_NAMESPACE_HTML &&
           kRawText.count(t.name);
  }

  static bool untranslated(const GumboNode* n) {
    const GumboVector* attributes = &n->v.element.attributes;
    if (const GumboAttribute* a = gumbo_get_attribute(attributes, "translate"); a && lower(a->value) == "no")
      return true;
    if (const GumboAttribute* a = gumbo_get_attribute(attributes, "class")) {
      const std::string_view classes = a->value;
      for (std::size_t i = 0; i < classes.size();) {
        while (i < classes.size() && ascii_space(classes[i])) ++i;
        std::size_t j = i;
        while (j < classes.size() && !ascii_space(classes[j])) ++j;
        if (classes.substr(i, j - i) == "notranslate") return true;
        i = j;
      }
    }
    return false;
  }

  // Each element's role, children first (the tree in reverse document order), and where the
  // source of each element ends (for the content that is not translated).
  void classify(const std::vector<const GumboNode*>& order) {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const GumboNode* n = *it;
      const GumboElement& e = n->v.element;
      bool holds_block = false;
      std::size_t end = 0;
      if (e.original_tag.length) end = offset_of(e.original_tag.data) + e.original_tag.length;
      if (has_end_tag_.count(n))
        end = std::max(end, offset_of(e.original_end_tag.data) + e.original_end_tag.length);
      else if (e.end_pos.line > 0)
        end = std::max<std::size_t>(end, e.end_pos.offset);
      for (unsigned i = 0; i < e.children.length; ++i) {
        const GumboNode* c = static_cast<const GumboNode*>(e.children.data[i]);
        if (is_element(c)) {
          holds_block = holds_block || breaks_runs(roles_.at(c));
          end = std::max(end, ends_.at(c));
        } else if (c->type != GUMBO_NODE_DOCUMENT && c->v.text.original_text.length) {
          end = std::max(end, offset_of(c->v.text.original_text.data) + c->v.text.original_text.length);
        }
      }
      Role role;
      if (e.tag_namespace != GUMBO_NAMESPACE_HTML) {
        role = Role::opaque_inline;
      } else {
        const std::string name = node_name(n);
        role = role_by_name(name);
        // An inline element around a block is a block itself (<a href><div>…</div></a>); the
        // content of <template>, <svg> and <math> is a world of its own.
        const bool own_world = name == "template" || name == "svg" || name == "math";
        if (holds_block && !own_world) {
          if (role == Role::inline_element) role = Role::block;
          if (role == Role::opaque_inline) role = Role::opaque_block;
        }
        if (untranslated(n) && role != Role::void_element)
          role = role == Role::inline_element || role == Role::opaque_inline ? Role::opaque_inline : Role::opaque_block;
      }
      roles_[n] = role;
      ends_[n] = std::min(end, src_.size());
    }
  }

  Role role_of(const Token& t) const {
    if (t.node) return roles_.at(t.node);
    if (t.kind == Token::Kind::markup && t.name.empty()) return Role::block;
    return role_by_name(t.name);
  }

  // ---- the walk

  void walk() {
    std::vector<Item> run;
    std::size_t run_begin = 0;
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      const auto add = [&](Item item) {
        if (run.empty()) run_begin = t.begin;
        run.push_back(std::move(item));
      };
      const auto break_run = [&](std::size_t literal_end) {
        finish_run(run, run_begin, t.begin);
        run.clear();
        add_literal(t.begin, literal_end);
      };
      switch (t.kind) {
        case Token::Kind::text:
          add({Item::Kind::text, t.begin, t.end, "", "", ""});
          break;
        case Token::Kind::comment:
          if (src_[t.end - 1] != '>') {
            break_run(t.end);  // unterminated at the end of the input: it would swallow what follows it
          } else {
            add({Item::Kind::empty, t.begin, t.end, "", std::string(source(t.begin, t.end)), ""});
          }
          break;
        case Token::Kind::markup: {
          if (t.end_tag && t.name.empty()) {  // "</>"
            add({Item::Kind::stray, t.begin, t.end, "", "", ""});
          } else if (breaks_runs(role_of(t))) {
            break_run(t.end);
          } else if (t.end_tag) {
            add({Item::Kind::close, t.begin, t.end, t.name, "", ""});
          } else {
            add({Item::Kind::stray, t.begin, t.end, t.name, "", ""});
          }
          break;
        }
        case Token::Kind::start: {
          const Role role = role_of(t);
          if (role == Role::opaque_block || role == Role::opaque_inline) {
            std::size_t end = std::max(ends_.at(t.node), t.end);
            while (i + 1 < tokens_.size() && tokens_[i + 1].begin < end) end = std::max(end, tokens_[++i].end);
            if (role == Role::opaque_block) {
              break_run(end);
            } else {
              Item item{Item::Kind::empty, t.begin, end, t.name, std::string(source(t.begin, end)), ""};
              if (!has_end_tag_.count(t.node)) {  // written closed, inside a translated run
                item.open += "</" + std::string(written_tag_name(source(t.begin, t.end))) + ">";
                item.repair = "unclosed <" + std::string(written_tag_name(source(t.begin, t.end))) +
                              ">, closed at the end of its content";
              }
              add(std::move(item));
            }
          } else if (role == Role::block) {
            break_run(t.end);
          } else if (role == Role::void_element) {
            add({Item::Kind::empty, t.begin, t.end, t.name, std::string(source(t.begin, t.end)), ""});
          } else {
            add({Item::Kind::open, t.begin, t.end, t.name, "", ""});
          }
          break;
        }
        case Token::Kind::end: {
          const Role role = role_of(t);
          if (breaks_runs(role)) {
            break_run(t.end);
          } else if (role == Role::void_element) {  // </br>, read as <br>
            add({Item::Kind::empty, t.begin, t.end, t.name, "<" + t.name + ">",
                 std::string(source(t.begin, t.end)) + " read as <" + t.name + ">"});
          } else {
            add({Item::Kind::close, t.begin, t.end, t.name, "", ""});
          }
          break;
        }
      }
    }
    finish_run(run, run_begin, src_.size());
  }

  // ---- runs into segments

  std::string decode(std::size_t begin, std::size_t end, bool warn_lt) {
    std::string out;
    out.reserve(end - begin);
    std::size_t i = begin;
    while (i < end) {
      const char c = src_[i];
      if (c == '&' && i + 1 < end && src_[i + 1] == '#') {  // &#233; &#xE9;
        const bool hex = i + 2 < end && (src_[i + 2] == 'x' || src_[i + 2] == 'X');
        std::size_t j = i + (hex ? 3 : 2);
        char32_t value = 0;
        const std::size_t digits = j;
        for (; j < end; ++j) {
          const char d = src_[j];
          int v;
          if (d >= '0' && d <= '9')
            v = d - '0';
          else if (hex && d >= 'a' && d <= 'f')
            v = d - 'a' + 10;
          else if (hex && d >= 'A' && d <= 'F')
            v = d - 'A' + 10;
          else
            break;
          value = std::min<char32_t>(value * (hex ? 16 : 10) + static_cast<char32_t>(v), 0x110000);
        }
        if (j > digits) {
          if (j < end && src_[j] == ';') ++j;
          append_utf8(out, numeric_reference(value));
          i = j;
          continue;
        }
      } else if (c == '&') {  // &eacute; &amp (named, some without their ';')
        std::size_t j = i + 1;
        while (j < end && ascii_alnum(src_[j])) ++j;
        if (j < end && src_[j] == ';') ++j;
        out += references_.decode(source(i, j));
        i = j;
        continue;
      }
      if (c == '<' && warn_lt) warn(i, "a '<' that starts no tag, written as &lt;");
      out += c;
      ++i;
    }
    return out;
  }

  static bool blank(std::string_view text) {  // whitespace only, the no-break spaces too
    for (std::size_t i = 0; i < text.size();) {
      const DecodedCodePoint cp = decode_utf8_at(text, i);
      const char32_t c = cp.code_point;
      const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x0B || c == 0xA0 ||
                         (c >= 0x2000 && c <= 0x200B) || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
      if (!space) return false;
      i += cp.length;
    }
    return true;
  }

  void finish_run(std::vector<Item>& run, std::size_t begin, std::size_t end) {
    if (run.empty()) return;
    bool has_text = false;
    for (const Item& item : run)
      if (item.kind == Item::Kind::text && !blank(decode(item.begin, item.end, false))) has_text = true;
    if (!has_text) {
      add_literal(begin, end);
      return;
    }
    // Whitespace in the source at either end stays outside the segment.
    std::size_t first = 0, last = run.size();
    while (run[first].kind == Item::Kind::text) {
      Item& t = run[first];
      while (t.begin < t.end && ascii_space(src_[t.begin])) ++t.begin;
      if (t.begin < t.end) break;
      ++first;
    }
    while (run[last - 1].kind == Item::Kind::text) {
      Item& t = run[last - 1];
      while (t.end > t.begin && ascii_space(src_[t.end - 1])) --t.end;
      if (t.end > t.begin) break;
      --last;
    }
    add_literal(begin, run[first].begin);
    segment(run, first, last);
    add_literal(run[last - 1].end, end);
  }

  void segment(const std::vector<Item>& run, std::size_t first, std::size_t last) {
    Segment s;
    std::vector<std::size_t> open;  // indices of the open elements' spans, innermost last
    std::vector<std::string> names;
    const auto parent = [&] { return open.empty() ? -1 : static_cast<int>(open.back()); };
    const auto close_written = [&](const std::string& why) {  // closes the innermost open element
      Span& sp = s.spans[open.back()];
      const std::string name(written_tag_name(sp.open));
      sp.end = s.text.size();
      sp.close = "</" + name + ">";
      warn(span_sources_[open.back()], "unclosed <" + name + ">, " + why);
      open.pop_back();
      names.pop_back();
    };
    span_sources_.clear();
    for (std::size_t k = first; k < last; ++k) {
      const Item& item = run[k];
      switch (item.kind) {
        case Item::Kind::text:
          s.text += decode(item.begin, item.end, true);
          break;
        case Item::Kind::open:
          s.spans.push_back({Span::Kind::element, s.text.size(), s.text.size(),
                             std::string(source(item.begin, item.end)), "", parent()});
          span_sources_.push_back(item.begin);
          open.push_back(s.spans.size() - 1);
          names.push_back(item.name);
          break;
        case Item::Kind::close: {
          const auto match = std::find(names.rbegin(), names.rend(), item.name);
          if (match == names.rend()) {
            warn(item.begin, "stray " + std::string(source(item.begin, item.end)) + " dropped");
            break;
          }
          const std::size_t depth = static_cast<std::size_t>(names.rend() - match) - 1;
          while (open.size() > depth + 1) close_written("closed with its parent <" + names[depth] + ">");
          Span& sp = s.spans[open.back()];
          sp.end = s.text.size();
          sp.close = std::string(source(item.begin, item.end));
          open.pop_back();
          names.pop_back();
          break;
        }
        case Item::Kind::empty:
          if (!item.repair.empty()) warn(item.begin, item.repair);
          s.spans.push_back({Span::Kind::empty_element, s.text.size(), s.text.size(), item.open, "", parent()});
          // A <br>, an image, an inline <code>…</code> stands between words; a comment or <wbr> does not.
          s.spans.back().breaks_words = !item.name.empty() && item.name != "wbr";
          span_sources_.push_back(item.begin);
          break;
        case Item::Kind::stray:
          warn(item.begin, "stray " + std::string(source(item.begin, item.end)) + " dropped");
          break;
      }
    }
    while (!open.empty()) close_written("closed at the end of its block");
    flush_literal();
    doc_.pieces.push_back({"", static_cast<int>(doc_.segments.size())});
    doc_.segments.push_back(std::move(s));
  }

  // ---- output

  void add_literal(std::size_t begin, std::size_t end) {
    if (end > begin) literal_.append(src_, begin, end - begin);
  }
  void flush_literal() {
    if (literal_.empty()) return;
    doc_.pieces.push_back({std::move(literal_), -1});
    literal_.clear();
  }
  // At most kMaxWarnings, and a count of the rest (a page broken everywhere says so in one line).
  static constexpr std::size_t kMaxWarnings = 100;
  void warn(std::size_t offset, const std::string& what) {
    if (++warnings_ <= kMaxWarnings) doc_.warnings.push_back(positions_.at(offset) + ": " + what);
  }
  void finish_warnings() {
    if (warnings_ > kMaxWarnings)
      doc_.warnings.push_back("and " + std::to_string(warnings_ - kMaxWarnings) + " more repairs like these");
  }

  const std::string& src_;
  Positions positions_;
  ReferenceDecoder references_;
  std::vector<Token> tokens_;
  std::unordered_set<const GumboNode*> has_end_tag_;
  std::unordered_map<const GumboNode*, Role> roles_;
  std::unordered_map<const GumboNode*, std::size_t> ends_;
  std::vector<std::size_t> span_sources_;  // per span of the segment being built: its source offset
  Document doc_;
  std::string literal_;
  std::size_t warnings_ = 0;
};

}  // namespace

Document read_html(const std::string& html) {
  if (const auto bad = find_invalid_utf8(html)) throw Error("HTML: invalid UTF-8 at byte " + std::to_string(*bad + 1));
  if (const std::size_t nul = html.find('\0'); nul != std::string::npos)
    throw Error("binary data, not HTML, at byte " + std::to_string(nul + 1));
  if (html.size() >= 0xFFFFFFFFu) throw Error("HTML: a document of 4 GB or more");
  return HtmlReader(html).read();
}

}  // namespace attn::document
