#include "document/document.h"

#include "core/error.h"
#include "core/xml_escape.h"

namespace attn::document {

std::string escape_text(const std::string& text, Escape escape) {
  return escape == Escape::none ? text : xml_escape(text, /*quotes=*/false);
}

void check_segment(const Segment& s, std::size_t index) {
  const auto fail = [&](std::size_t span, const std::string& what) {
    throw Error("document segment " + std::to_string(index) + ", span " + std::to_string(span) + ": " + what);
  };
  const auto boundary = [&](std::size_t at) {
    return at == s.text.size() || (static_cast<unsigned char>(s.text[at]) & 0xC0) != 0x80;
  };
  std::vector<std::size_t> last_child_end(s.spans.size() + 1, 0);  // per parent (+1: the root)
  for (std::size_t i = 0; i < s.spans.size(); ++i) {
    const Span& sp = s.spans[i];
    if (sp.begin > sp.end || sp.end > s.text.size()) fail(i, "outside the text");
    if (!boundary(sp.begin) || !boundary(sp.end)) fail(i, "not at a character boundary");
    if (sp.kind != Span::Kind::element && sp.begin != sp.end) fail(i, "an empty element or text with a length");
    if (sp.parent >= static_cast<int>(i)) fail(i, "its parent comes after it");
    std::size_t lo = 0, hi = s.text.size();
    if (sp.parent >= 0) {
      const Span& p = s.spans[static_cast<std::size_t>(sp.parent)];
      if (p.kind != Span::Kind::element) fail(i, "its parent is not an element");
      lo = p.begin, hi = p.end;
    }
    if (sp.begin < lo || sp.end > hi) fail(i, "outside its parent");
    std::size_t& previous = last_child_end[static_cast<std::size_t>(sp.parent + 1)];
    if (sp.begin < previous) fail(i, "overlaps or comes before an earlier sibling");
    previous = sp.end;
  }
}

namespace {

struct Renderer {
  const Segment& s;
  Escape escape;
  std::vector<std::vector<std::size_t>> children;  // per parent (+1: the root)
  std::string out, loose;                          // loose: text at the top level not yet wrapped

  void flush() {
    if (loose.empty()) return;
    out += s.outside_open + loose + s.outside_close;
    loose.clear();
  }
  void text(const std::string& t, int depth) {
    if (t.empty()) return;
    if (depth == 0 && !s.outside_open.empty())
      loose += escape_text(t, escape);
    else
      out += escape_text(t, escape);
  }
  void markup(const std::string& m, int depth) {
    if (depth == 0) flush();
    out += m;
  }
  void range(std::size_t begin, std::size_t end, int parent, int depth) {
    std::size_t at = begin;
    for (std::size_t c : children[static_cast<std::size_t>(parent + 1)]) {
      const Span& sp = s.spans[c];
      text(s.text.substr(at, sp.begin - at), depth);
      switch (sp.kind) {
        case Span::Kind::element:
          markup(sp.open, depth);
          range(sp.begin, sp.end, static_cast<int>(c), depth + 1);
          markup(sp.close, depth);
          break;
        case Span::Kind::empty_element:
          markup(sp.open, depth);
          break;
        case Span::Kind::text:
          text(sp.open, depth);
          break;
      }
      at = sp.kind == Span::Kind::element ? sp.end : sp.begin;
    }
    text(s.text.substr(at, end - at), depth);
  }
};

}  // namespace

std::string render_segment(const Segment& segment, Escape escape) {
  Renderer r{segment, escape, std::vector<std::vector<std::size_t>>(segment.spans.size() + 1), "", ""};
  for (std::size_t i = 0; i < segment.spans.size(); ++i)
    r.children[static_cast<std::size_t>(segment.spans[i].parent + 1)].push_back(i);
  r.range(0, segment.text.size(), -1, 0);
  r.flush();
  return r.out;
}

std::string assemble(const Document& document, const std::vector<std::string>& rendered) {
  if (rendered.size() != document.segments.size())
    throw Error("document: " + std::to_string(rendered.size()) + " translated segments for " +
                std::to_string(document.segments.size()));
  std::string out;
  for (const Piece& p : document.pieces) {
    if (p.segment < 0)
      out += p.literal;
    else
      out += rendered.at(static_cast<std::size_t>(p.segment));
  }
  return out;
}

}  // namespace attn::document
