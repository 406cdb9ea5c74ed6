#pragma once
// Internal to the office readers (office_document.cpp, docx_document.cpp, odt_document.cpp): one XML
// part of a package as a tree of byte ranges into its own text, so that whatever is not translated
// is copied byte for byte, and the walk that turns a part into a document.
//
// libxml2 checks the part first (well-formed, UTF-8, no DTD) and resolves each element's namespace;
// a small tokenizer then finds the bytes of each tag and text, which it can do simply because the
// text is known to be well-formed.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "document/document.h"

namespace attn::document::office {

struct XmlNode {
  enum class Type {
    element,
    text,
    other
  };  // text: character data (with entities and CDATA as written);
      // other: comments, processing instructions, the prolog
  Type type = Type::other;
  std::size_t begin = 0, end = 0;                // the whole node, tags included
  std::size_t open_end = 0, close_begin = 0;     // element: its start tag is [begin, open_end), its end
                                                 // tag [close_begin, end); both == end when self-closing
  std::size_t name_begin = 0, name_end = 0;      // element: the qualified name as written ("w:r")
  int ns = -1;                                   // element: index into XmlPart::namespaces, -1: none
  int parent = -1, first_child = -1, next = -1;  // indices into XmlPart::nodes
};

struct XmlPart {
  std::string name;  // the zip entry, for messages
  std::string xml;
  std::vector<XmlNode> nodes;           // in document order
  std::vector<std::string> namespaces;  // the namespace URIs that occur
  std::vector<int> top;                 // the nodes outside every element, and the root

  std::string_view bytes(std::size_t begin, std::size_t end) const {
    return std::string_view(xml).substr(begin, end - begin);
  }
  std::string_view bytes(const XmlNode& n) const { return bytes(n.begin, n.end); }
  std::string_view qname(const XmlNode& n) const { return bytes(n.name_begin, n.name_end); }
  std::string_view local_name(const XmlNode& n) const;
  std::string_view prefix(const XmlNode& n) const;  // "w" of "w:r", "" without one
  // An element in namespace `ns_uri` named `local`.
  bool is(const XmlNode& n, std::string_view ns_uri, std::string_view local) const;
  std::vector<int> children(int node) const;
  // The text of a text node, entities and character references decoded, CDATA unwrapped.
  std::string text(const XmlNode& n) const;
};

// Checks `xml` with libxml2 and splits it into nodes. Throws Error "name:line: malformed XML (…)"
// for XML that does not parse, and for a DTD or an encoding other than UTF-8.
XmlPart parse_part(const std::string& name, std::string xml);

// A part written as a document: literal byte ranges and segments, in order.
class DocumentWriter {
 public:
  DocumentWriter(const XmlPart& part, const std::string& format);
  void literal(std::size_t begin, std::size_t end);
  void segment(Segment segment);
  Document finish();

 private:
  const XmlPart& part_;
  Document document_;
  std::string pending_;
};

// What a format says about a paragraph's children, from its first to its last child in one stretch
// without nested paragraphs: the segment, and the bytes it replaces.
struct Stretch {
  bool translated = false;  // false: no text; all of it stays literal
  std::size_t begin = 0, end = 0;
  Segment segment;
};
using StretchReader = std::function<Stretch(const std::vector<int>& children)>;

// Walks the part: every byte literal except the paragraphs (`is_paragraph`), whose children are read
// by `read` in stretches between the children that hold nested paragraphs (a text box, a note),
// which are walked in turn.
Document read_paragraphs(const XmlPart& part, const std::string& format,
                         const std::function<bool(const XmlNode&)>& is_paragraph, const StretchReader& read);

// True for text made only of XML whitespace (or empty).
bool blank(std::string_view text);

}  // namespace attn::document::office

namespace attn::document {
// The part readers (docx_document.cpp, odt_document.cpp).
Document read_docx_part(const office::XmlPart& part);
Document read_odt_part(const office::XmlPart& part);
}  // namespace attn::document
