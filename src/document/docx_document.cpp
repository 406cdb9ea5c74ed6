// A .docx part (WordprocessingML) as a document: each paragraph (w:p) a segment of its runs' text.
//
// Word keeps text in runs (<w:r><w:rPr>formatting</w:rPr><w:t>text</w:t></w:r>) and splits a word
// over several runs whenever it likes, so runs with the same formatting side by side are one stretch
// of text, and the formatting is the run's w:rPr as written. The stretch's markup is rebuilt around
// whatever text the translation puts there:
// - the most common formatting of the paragraph is outside_open/outside_close: "<w:r>rPr<w:t …>", "</w:t></w:r>";
// - a stretch of other formatting is an element whose open and close are its own run's markup;
// - w:hyperlink, w:ins, w:smartTag, w:fldSimple, … with text inside are elements around their runs:
//   open "<w:hyperlink …><w:r>rPr<w:t …>", close "</w:t></w:r></w:hyperlink>", and the runs inside
//   with another formatting close and reopen the run around them;
// - inside a run, w:tab, w:br, a drawing, … are empty elements; where the translation leaves them
//   outside a run, their open wraps them in one ("<w:r>rPr<w:tab/></w:r>"), inside a run's text it
//   closes and reopens the w:t ("</w:t><w:tab/><w:t …>");
// - what sits beside the runs (bookmarks, w:proofErr, runs without text such as field codes, content
//   controls, math) is literal before or after the segment, or an empty element in between.
// Whitespace between the elements of a paragraph means nothing in WordprocessingML and is dropped
// from the segment's bytes.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "document/office_xml.h"

namespace attn::document {

namespace {

using office::XmlNode;
using office::XmlPart;

constexpr std::string_view kW = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
constexpr std::string_view kWStrict = "http://purl.oclc.org/ooxml/wordprocessingml/main";

// A run formatting, keyed by its w:rPr as written ("" without one).
struct Format {
  std::string run_open;  // the run's start tag and its rPr
  std::string run_close, t_open, t_close;
  std::string open() const { return run_open + t_open; }
  std::string close() const { return t_close + run_close; }
};

class ParagraphReader {
 public:
  explicit ParagraphReader(const XmlPart& part) : p_(part) {}

  office::Stretch read(const std::vector<int>& children) {
    office::Stretch out;
    const std::vector<int> items = text_between(children);
    if (items.empty()) return out;
    outside_ = &main_format(items);
    add(items, -1, nullptr);
    if (office::blank(segment_.text)) return out;
    segment_.outside_open = outside_->open();
    segment_.outside_close = outside_->close();
    out.translated = true;
    out.begin = node(items.front()).begin;
    out.end = node(items.back()).end;
    out.segment = std::move(segment_);
    return out;
  }

 private:
  const XmlPart& p_;
  Segment segment_;
  std::map<std::string, Format, std::less<>> formats_;
  const Format* outside_ = nullptr;

  const XmlNode& node(int i) const { return p_.nodes[static_cast<std::size_t>(i)]; }
  bool w(const XmlNode& n, std::string_view local) const { return p_.is(n, kW, local) || p_.is(n, kWStrict, local); }

  int rpr_of(int run) const {
    for (int c : p_.children(run))
      if (w(node(c), "rPr")) return c;
    return -1;
  }
  // A run whose text can be read: it has w:t children with only text in them. Its start tag is
  // reused for other runs of its formatting, so it must not declare namespaces for its own content.
  bool is_text_run(int i) const {
    const XmlNode& n = node(i);
    if (!w(n, "r") || p_.bytes(n.begin, n.open_end).find("xmlns") != std::string_view::npos) return false;
    bool has_t = false;
    for (int c : p_.children(i)) {
      if (!w(node(c), "t")) continue;
      has_t = true;
      for (int t : p_.children(c))
        if (node(t).type == XmlNode::Type::element) return false;
    }
    return has_t;
  }
  bool is_container(int i) const {
    const XmlNode& n = node(i);
    for (const char* local : {"hyperlink", "ins", "moveTo", "smartTag", "fldSimple", "customXml", "dir", "bdo"})
      if (w(n, local)) return n.close_begin > n.open_end;
    return false;
  }
  std::string run_text(int run) const {
    std::string text;
    for (int c : p_.children(run))
      if (w(node(c), "t"))
        for (int t : p_.children(c))
          if (node(t).type == XmlNode::Type::text) text += p_.text(node(t));
    return text;
  }
  bool bears_text(int i) const {
    if (is_text_run(i)) return !run_text(i).empty();
    if (!is_container(i)) return false;
    for (int c : p_.children(i))
      if (bears_text(c)) return true;
    return false;
  }
  // The items from the first that bears text to the last (none: none does).
  std::vector<int> text_between(const std::vector<int>& items) const {
    std::size_t first = items.size(), last = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!bears_text(items[i])) continue;
      if (first == items.size()) first = i;
      last = i;
    }
    if (first == items.size()) return {};
    return std::vector<int>(items.begin() + static_cast<std::ptrdiff_t>(first),
                            items.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  }
  int first_text_run(int i) const {
    if (is_text_run(i)) return i;
    if (!is_container(i)) return -1;
    for (int c : p_.children(i))
      if (const int r = first_text_run(c); r >= 0) return r;
    return -1;
  }

  const Format& format_of(int run) {
    const int rpr = rpr_of(run);
    const std::string key = rpr < 0 ? "" : std::string(p_.bytes(node(rpr)));
    if (const auto it = formats_.find(key); it != formats_.end()) return it->second;
    const XmlNode& r = node(run);
    const std::string prefix = p_.prefix(r).empty() ? "" : std::string(p_.prefix(r)) + ":";
    Format f;
    f.run_open = std::string(p_.bytes(r.begin, r.open_end)) + key;
    f.run_close = "</" + std::string(p_.qname(r)) + ">";
    f.t_open = "<" + prefix + "t xml:space=\"preserve\">";
    f.t_close = "</" + prefix + "t>";
    return formats_.emplace(key, std::move(f)).first->second;
  }
  // The formatting with the most text among the runs of `items` (the first of equals), or, with
  // none among them, the first run's inside a hyperlink or the like.
  const Format& main_format(const std::vector<int>& items) {
    std::vector<std::pair<int, std::size_t>> seen;  // a run of each formatting, its text's bytes
    std::map<std::string, std::size_t, std::less<>> slot;
    for (int i : items) {
      if (!is_text_run(i)) continue;
      const int rpr = rpr_of(i);
      const std::string key = rpr < 0 ? "" : std::string(p_.bytes(node(rpr)));
      const auto [it, added] = slot.emplace(key, seen.size());
      if (added) seen.push_back({i, 0});
      seen[it->second].second += run_text(i).size();
    }
    int best = -1;
    std::size_t most = 0;
    for (const auto& [run, bytes] : seen)
      if (best < 0 || bytes > most) best = run, most = bytes;
    for (std::size_t k = 0; best < 0 && k < items.size(); ++k) best = first_text_run(items[k]);
    if (best < 0) {  // no run at all: a plain run in the paragraph's namespace prefix
      static const Format plain{"<w:r>", "</w:r>", "<w:t xml:space=\"preserve\">", "</w:t>"};
      return plain;
    }
    return format_of(best);
  }

  int push(Span span) {
    segment_.spans.push_back(std::move(span));
    return static_cast<int>(segment_.spans.size()) - 1;
  }
  // Reads `items` into the segment as children of span `parent`; `inside`: the formatting of the
  // run whose w:t the markup around them leaves open (nullptr at the paragraph's level).
  void add(const std::vector<int>& items, int parent, const Format* inside) {
    int stretch = -1;  // the element of the last run's formatting, to extend with the next run
    const Format* stretch_format = nullptr;
    for (int i : items) {
      const XmlNode& n = node(i);
      if (n.type != XmlNode::Type::element) continue;  // whitespace and comments between runs
      const std::size_t at = segment_.text.size();
      if (is_text_run(i)) {
        const Format& f = format_of(i);
        const Format& around = inside ? *inside : *outside_;
        int where = parent;
        const Format* current = &around;
        if (&f != &around) {
          if (stretch < 0 || stretch_format != &f) {
            stretch = push({Span::Kind::element, at, at, inside ? inside->close() + f.open() : f.open(),
                            inside ? f.close() + inside->open() : f.close(), parent});
            stretch_format = &f;
          }
          where = stretch;
          current = &f;
        } else {
          stretch = -1;
        }
        add_run(i, where, *current);
        if (where >= 0 && where == stretch)
          segment_.spans[static_cast<std::size_t>(stretch)].end = segment_.text.size();
      } else if (is_container(i) && bears_text(i)) {
        stretch = -1;
        // What comes before its first text and after its last stays there (w:smartTagPr must be
        // first): in the element's open and close.
        const std::vector<int> children = text_between(p_.children(i));
        const Format& m = main_format(children);
        const std::string start(p_.bytes(n.begin, node(children.front()).begin));
        const std::string end(p_.bytes(node(children.back()).end, n.end));
        const int span = push({Span::Kind::element, at, at, (inside ? inside->close() : "") + start + m.open(),
                               m.close() + end + (inside ? inside->open() : ""), parent});
        add(children, span, &m);
        segment_.spans[static_cast<std::size_t>(span)].end = segment_.text.size();
      } else {
        stretch = -1;
        const std::string markup(p_.bytes(n));
        push({Span::Kind::empty_element, at, at, inside ? inside->close() + markup + inside->open() : markup, "",
              parent});
      }
    }
  }
  void add_run(int run, int where, const Format& f) {
    const int rpr = rpr_of(run);
    for (int c : p_.children(run)) {
      const XmlNode& n = node(c);
      if (c == rpr || n.type != XmlNode::Type::element) continue;
      if (w(n, "t")) {
        for (int t : p_.children(c))
          if (node(t).type == XmlNode::Type::text) segment_.text += p_.text(node(t));
        continue;
      }
      const std::string markup(p_.bytes(n));
      const std::size_t at = segment_.text.size();
      const int span = push({Span::Kind::empty_element, at, at,
                             where < 0 ? f.run_open + markup + f.run_close : f.t_close + markup + f.t_open, "", where});
      segment_.spans[static_cast<std::size_t>(span)].breaks_words = w(n, "tab") || w(n, "br") || w(n, "cr");
    }
  }
};

}  // namespace

Document read_docx_part(const XmlPart& part) {
  return office::read_paragraphs(
      part, "docx", [&](const XmlNode& n) { return part.is(n, kW, "p") || part.is(n, kWStrict, "p"); },
      [&](const std::vector<int>& children) { return ParagraphReader(part).read(children); });
}

}  // namespace attn::document
