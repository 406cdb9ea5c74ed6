// An .odt part (content.xml, styles.xml) as a document: each paragraph and heading (text:p, text:h)
// a segment. OpenDocument keeps text directly in the paragraph, so no outside markup is needed:
// text:span, text:a and text:meta with text inside are elements whose open and close are their own
// tags; everything else inside (text:s, text:tab, text:line-break, text:soft-page-break, bookmarks,
// fields, frames, comments) is an empty element keeping its markup, or literal where it comes
// before the first text or after the last. Every segment renders back to its bytes as they were
// (text written with &amp; &lt; &gt;, as LibreOffice and odfpy write it).
#include <string>
#include <string_view>
#include <vector>

#include "document/office_xml.h"

namespace attn::document {

namespace {

using office::XmlNode;
using office::XmlPart;

constexpr std::string_view kText = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";

class ParagraphReader {
 public:
  explicit ParagraphReader(const XmlPart& part) : p_(part) {}

  office::Stretch read(const std::vector<int>& children) {
    std::size_t first = children.size(), last = 0;
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (!bears_text(children[i])) continue;
      if (first == children.size()) first = i;
      last = i;
    }
    office::Stretch out;
    if (first == children.size()) return out;
    const std::vector<int> items(children.begin() + static_cast<std::ptrdiff_t>(first),
                                 children.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    add(items, -1);
    if (office::blank(segment_.text)) return out;
    out.translated = true;
    out.begin = node(items.front()).begin;
    out.end = node(items.back()).end;
    out.segment = std::move(segment_);
    return out;
  }

 private:
  const XmlPart& p_;
  Segment segment_;

  const XmlNode& node(int i) const { return p_.nodes[static_cast<std::size_t>(i)]; }
  bool is_inline(const XmlNode& n) const {
    return p_.is(n, kText, "span") || p_.is(n, kText, "a") || p_.is(n, kText, "meta");
  }
  bool bears_text(int i) const {
    const XmlNode& n = node(i);
    if (n.type == XmlNode::Type::text) return n.end > n.begin;
    if (!is_inline(n)) return false;
    for (int c = n.first_child; c >= 0; c = node(c).next)
      if (bears_text(c)) return true;
    return false;
  }
  void add(const std::vector<int>& items, int parent) {
    for (int i : items) {
      const XmlNode& n = node(i);
      const std::size_t at = segment_.text.size();
      if (n.type == XmlNode::Type::text) {
        segment_.text += p_.text(n);
      } else if (is_inline(n) && bears_text(i)) {
        segment_.spans.push_back({Span::Kind::element, at, at, std::string(p_.bytes(n.begin, n.open_end)),
                                  std::string(p_.bytes(n.close_begin, n.end)), parent});
        const int span = static_cast<int>(segment_.spans.size()) - 1;
        add(p_.children(i), span);
        segment_.spans[static_cast<std::size_t>(span)].end = segment_.text.size();
      } else {
        segment_.spans.push_back({Span::Kind::empty_element, at, at, std::string(p_.bytes(n)), "", parent});
        segment_.spans.back().breaks_words =
            p_.is(n, kText, "s") || p_.is(n, kText, "tab") || p_.is(n, kText, "line-break");
      }
    }
  }
};

}  // namespace

Document read_odt_part(const XmlPart& part) {
  return office::read_paragraphs(
      part, "odt", [&](const XmlNode& n) { return part.is(n, kText, "p") || part.is(n, kText, "h"); },
      [&](const std::vector<int>& children) { return ParagraphReader(part).read(children); });
}

}  // namespace attn::document
