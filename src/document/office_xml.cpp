#include "document/office_xml.h"

#include <libxml/globals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/error.h"
#include "core/utf8.h"

namespace attn::document::office {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool starts(std::string_view s, std::size_t at, std::string_view what) { return s.substr(at, what.size()) == what; }

// A DTD could declare entities that expand without bound (and office formats never have one): the
// prolog is checked before libxml2 sees the part.
void refuse_dtd(const std::string& name, std::string_view xml) {
  std::size_t at = starts(xml, 0, "\xEF\xBB\xBF") ? 3 : 0;
  while (at < xml.size()) {
    if (is_space(xml[at])) {
      ++at;
    } else if (starts(xml, at, "<?")) {
      const std::size_t end = xml.find("?>", at + 2);
      if (end == std::string_view::npos) return;  // libxml2 says what is wrong
      at = end + 2;
    } else if (starts(xml, at, "<!--")) {
      const std::size_t end = xml.find("-->", at + 4);
      if (end == std::string_view::npos) return;
      at = end + 3;
    } else if (starts(xml, at, "<!DOCTYPE")) {
      std::size_t line = 1;
      for (std::size_t i = 0; i < at; ++i) line += xml[i] == '\n';
      throw_at(name, line, "a DTD (<!DOCTYPE), which office files never have, is not read");
    } else {
      return;
    }
  }
}

struct ElementName {
  int ns;
  std::string local;
};

struct Checked {
  std::vector<ElementName> elements;  // in document order
  std::vector<std::string> namespaces;
};

void on_xml_error(void* user, xmlErrorPtr error) {
  auto* first = static_cast<std::pair<int, std::string>*>(user);
  if (error == nullptr || error->level < XML_ERR_ERROR || !first->second.empty()) return;
  std::string message = error->message ? error->message : "unknown error";
  while (!message.empty() && is_space(message.back())) message.pop_back();
  *first = {error->line, message};
}

// libxml2 prints some problems (an input it cannot convert) on stderr rather than to the reader's
// handler; the part's error is reported all the same. Its handlers are per thread.
class QuietLibxml2 {
 public:
  QuietLibxml2() : saved_(xmlGenericError), saved_context_(xmlGenericErrorContext) {
    xmlSetGenericErrorFunc(nullptr, &ignore);
  }
  ~QuietLibxml2() { xmlSetGenericErrorFunc(saved_context_, saved_); }
  QuietLibxml2(const QuietLibxml2&) = delete;
  QuietLibxml2& operator=(const QuietLibxml2&) = delete;

 private:
  static void ignore(void*, const char*, ...) {}
  xmlGenericErrorFunc saved_;
  void* saved_context_;
};

// libxml2's reader streams through the part: it checks it and names each element's namespace
// without building the whole tree (a 64 MiB part would take several times that as a tree).
Checked check_with_libxml2(const std::string& name, const std::string& xml) {
  static std::once_flag init;
  std::call_once(init, [] { xmlInitParser(); });
  if (xml.size() > static_cast<std::size_t>(INT_MAX)) throw_in(name, "over 2 GiB of XML");
  const QuietLibxml2 quiet;
  const auto free_reader = [](xmlTextReaderPtr r) { xmlFreeTextReader(r); };
  std::unique_ptr<xmlTextReader, decltype(free_reader)> reader(
      xmlReaderForMemory(xml.data(), static_cast<int>(xml.size()), name.c_str(), nullptr, XML_PARSE_NONET),
      free_reader);
  if (!reader) throw_in(name, "libxml2 could not start reading the part");
  std::pair<int, std::string> first_error{0, ""};
  xmlTextReaderSetStructuredErrorHandler(reader.get(), on_xml_error, &first_error);
  Checked out;
  std::unordered_map<std::string, int> ns_index;
  int ret;
  while ((ret = xmlTextReaderRead(reader.get())) == 1) {
    const int type = xmlTextReaderNodeType(reader.get());
    if (type == XML_READER_TYPE_DOCUMENT_TYPE)
      throw_at(name, static_cast<std::size_t>(xmlTextReaderGetParserLineNumber(reader.get())),
               "a DTD (<!DOCTYPE), which office files never have, is not read");
    if (type == XML_READER_TYPE_ENTITY_REFERENCE)
      throw_at(name, static_cast<std::size_t>(xmlTextReaderGetParserLineNumber(reader.get())),
               "an entity reference other than XML's own five");
    if (type != XML_READER_TYPE_ELEMENT) continue;
    const xmlChar* uri = xmlTextReaderConstNamespaceUri(reader.get());
    const xmlChar* local = xmlTextReaderConstLocalName(reader.get());
    int ns = -1;
    if (uri != nullptr) {
      const std::string u(reinterpret_cast<const char*>(uri));
      const auto [it, added] = ns_index.emplace(u, static_cast<int>(out.namespaces.size()));
      if (added) out.namespaces.push_back(u);
      ns = it->second;
    }
    out.elements.push_back({ns, local ? reinterpret_cast<const char*>(local) : ""});
  }
  if (ret != 0 || !first_error.second.empty()) {
    if (first_error.second.empty()) first_error = {xmlTextReaderGetParserLineNumber(reader.get()), "unreadable"};
    throw_at(name, static_cast<std::size_t>(std::max(first_error.first, 1)),
             "malformed XML (" + first_error.second + ")");
  }
  if (const xmlChar* e = xmlTextReaderConstEncoding(reader.get())) {
    std::string enc(reinterpret_cast<const char*>(e));
    for (char& c : enc) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (enc != "UTF-8" && enc != "UTF8" && enc != "US-ASCII" && enc != "ASCII")
      throw_in(name, "the XML is in " + enc + "; office parts are read in UTF-8 only");
  }
  return out;
}

// The tokenizer: valid only on XML that libxml2 has accepted; any surprise is an internal error,
// never a crash.
class Tokenizer {
 public:
  Tokenizer(XmlPart& part) : p_(part), s_(part.xml) {}

  void run() {
    std::size_t at = 0;
    while (at < s_.size()) {
      if (s_[at] != '<') {
        const std::size_t end = std::min(s_.find('<', at), s_.size());
        add_text(at, end, stack_.empty() ? XmlNode::Type::other : XmlNode::Type::text);
        at = end;
      } else if (starts(s_, at, "<?")) {
        at = add_other(at, find_after(at + 2, "?>"));
      } else if (starts(s_, at, "<!--")) {
        at = add_other(at, find_after(at + 4, "-->"));  // "<!-->" does not end there
      } else if (starts(s_, at, "<![CDATA[")) {
        const std::size_t end = find_after(at + 9, "]]>");
        add_text(at, end, XmlNode::Type::text);
        at = end;
      } else if (starts(s_, at, "</")) {
        const std::size_t end = find_after(at, ">");
        if (stack_.empty()) lost(at);
        XmlNode& n = p_.nodes[static_cast<std::size_t>(stack_.back())];
        n.close_begin = at;
        n.end = end;
        stack_.pop_back();
        at = end;
      } else if (starts(s_, at, "<!")) {
        lost(at);
      } else {
        at = start_tag(at);
      }
    }
    if (!stack_.empty()) lost(s_.size());
  }

 private:
  XmlPart& p_;
  std::string_view s_;
  std::vector<int> stack_;       // open elements
  std::vector<int> last_child_;  // per open element, and one for the top level (-1: none yet)
  int last_top_ = -1;

  [[noreturn]] void lost(std::size_t at) {
    throw Error(p_.name + ": internal error: the XML tokenizer is lost at byte " + std::to_string(at));
  }
  // Just past the first `what` from `at` on (the caller starts after its opening's own bytes).
  std::size_t find_after(std::size_t at, std::string_view what) {
    const std::size_t end = s_.find(what, at);
    if (end == std::string_view::npos) lost(at);
    return end + what.size();
  }
  int add(XmlNode n) {
    const int index = static_cast<int>(p_.nodes.size());
    n.parent = stack_.empty() ? -1 : stack_.back();
    int& last = stack_.empty() ? last_top_ : last_child_[stack_.size() - 1];
    if (last >= 0)
      p_.nodes[static_cast<std::size_t>(last)].next = index;
    else if (n.parent >= 0)
      p_.nodes[static_cast<std::size_t>(n.parent)].first_child = index;
    last = index;
    if (n.parent < 0) p_.top.push_back(index);
    p_.nodes.push_back(n);
    return index;
  }
  std::size_t add_other(std::size_t begin, std::size_t end) {
    XmlNode n;
    n.type = XmlNode::Type::other;
    n.begin = n.open_end = n.close_begin = begin;
    n.end = end;
    add(n);
    return end;
  }
  // Character data, references and CDATA sections side by side are one text node.
  void add_text(std::size_t begin, std::size_t end, XmlNode::Type type) {
    const int last = stack_.empty() ? last_top_ : last_child_[stack_.size() - 1];
    if (last >= 0) {
      XmlNode& prev = p_.nodes[static_cast<std::size_t>(last)];
      if (prev.type == type && type == XmlNode::Type::text && prev.end == begin) {
        prev.end = end;
        return;
      }
    }
    XmlNode n;
    n.type = type;
    n.begin = begin;
    n.end = end;
    add(n);
  }
  std::size_t start_tag(std::size_t at) {
    std::size_t i = at + 1;
    while (i < s_.size() && !is_space(s_[i]) && s_[i] != '/' && s_[i] != '>') ++i;
    XmlNode n;
    n.type = XmlNode::Type::element;
    n.begin = at;
    n.name_begin = at + 1;
    n.name_end = i;
    while (i < s_.size() && s_[i] != '>') {
      if (s_[i] == '"' || s_[i] == '\'') {
        const std::size_t close = s_.find(s_[i], i + 1);
        if (close == std::string_view::npos) lost(i);
        i = close;
      }
      ++i;
    }
    if (i >= s_.size() || n.name_end == n.name_begin) lost(at);
    n.open_end = i + 1;
    const bool empty = s_[i - 1] == '/';
    if (empty) n.close_begin = n.end = n.open_end;
    const int index = add(n);
    if (!empty) {
      stack_.push_back(index);
      last_child_.resize(stack_.size());
      last_child_.back() = -1;
    }
    return i + 1;
  }
};

}  // namespace

std::string_view XmlPart::local_name(const XmlNode& n) const {
  const std::string_view q = qname(n);
  const std::size_t colon = q.find(':');
  return colon == std::string_view::npos ? q : q.substr(colon + 1);
}

std::string_view XmlPart::prefix(const XmlNode& n) const {
  const std::string_view q = qname(n);
  const std::size_t colon = q.find(':');
  return colon == std::string_view::npos ? std::string_view() : q.substr(0, colon);
}

bool XmlPart::is(const XmlNode& n, std::string_view ns_uri, std::string_view local) const {
  return n.type == XmlNode::Type::element && n.ns >= 0 && local_name(n) == local &&
         namespaces[static_cast<std::size_t>(n.ns)] == ns_uri;
}

std::vector<int> XmlPart::children(int node) const {
  std::vector<int> out;
  for (int c = nodes[static_cast<std::size_t>(node)].first_child; c >= 0; c = nodes[static_cast<std::size_t>(c)].next)
    out.push_back(c);
  return out;
}

std::string XmlPart::text(const XmlNode& n) const {
  const std::string_view raw = bytes(n);
  std::string out;
  out.reserve(raw.size());
  std::size_t i = 0;
  while (i < raw.size()) {
    if (starts(raw, i, "<![CDATA[")) {
      const std::size_t end = std::min(raw.find("]]>", i + 9), raw.size());
      out.append(raw.substr(i + 9, end - (i + 9)));
      i = end + 3;
    } else if (raw[i] == '&') {
      const std::size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos) throw Error(name + ": internal error: an unterminated reference");
      const std::string_view ref = raw.substr(i + 1, semi - i - 1);
      if (ref == "amp") {
        out += '&';
      } else if (ref == "lt") {
        out += '<';
      } else if (ref == "gt") {
        out += '>';
      } else if (ref == "quot") {
        out += '"';
      } else if (ref == "apos") {
        out += '\'';
      } else if (ref.size() > 1 && ref[0] == '#') {
        const bool hex = ref[1] == 'x';
        std::uint32_t cp = 0;
        for (char c : ref.substr(hex ? 2 : 1)) {
          const int digit = c >= '0' && c <= '9'   ? c - '0'
                            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                   : 99;
          if (digit >= (hex ? 16 : 10) || cp > 0x10FFFF) throw Error(name + ": internal error: a bad reference");
          cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(digit);
        }
        if (cp > 0x10FFFF) throw Error(name + ": internal error: a bad reference");
        append_utf8(out, static_cast<char32_t>(cp));
      } else {
        throw Error(name + ": internal error: an unknown entity &" + std::string(ref) + ";");
      }
      i = semi + 1;
    } else {
      const std::size_t next = std::min({raw.find('&', i), raw.find("<![CDATA[", i), raw.size()});
      out.append(raw.substr(i, next - i));
      i = next;
    }
  }
  return out;
}

XmlPart parse_part(const std::string& name, std::string xml) {
  refuse_dtd(name, xml);
  if (starts(xml, 0, "\xFE\xFF") || starts(xml, 0, "\xFF\xFE"))
    throw_in(name, "the XML is in UTF-16; office parts are read in UTF-8 only");
  const Checked checked = check_with_libxml2(name, xml);
  // libxml2 2.9 lets invalid UTF-8 through inside CDATA sections.
  if (const auto bad = find_invalid_utf8(xml)) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < *bad; ++i) line += xml[i] == '\n';
    throw_at(name, line, "malformed XML (invalid UTF-8 at byte " + std::to_string(*bad) + ")");
  }
  XmlPart part;
  part.name = name;
  part.xml = std::move(xml);
  part.namespaces = checked.namespaces;
  Tokenizer(part).run();
  std::size_t k = 0;
  for (XmlNode& n : part.nodes) {
    if (n.type != XmlNode::Type::element) continue;
    if (k >= checked.elements.size() || part.local_name(n) != checked.elements[k].local)
      throw Error(name + ": internal error: the XML tokenizer disagrees with libxml2 at byte " +
                  std::to_string(n.begin));
    n.ns = checked.elements[k++].ns;
  }
  if (k != checked.elements.size())
    throw Error(name + ": internal error: the XML tokenizer found fewer elements than libxml2");
  return part;
}

DocumentWriter::DocumentWriter(const XmlPart& part, const std::string& format) : part_(part) {
  document_.format = format;
  document_.escape = Escape::xml;
}

void DocumentWriter::literal(std::size_t begin, std::size_t end) {
  if (begin < end) pending_.append(part_.xml, begin, end - begin);
}

void DocumentWriter::segment(Segment segment) {
  if (!pending_.empty()) document_.pieces.push_back({std::move(pending_), -1});
  pending_.clear();
  document_.pieces.push_back({"", static_cast<int>(document_.segments.size())});
  document_.segments.push_back(std::move(segment));
}

Document DocumentWriter::finish() {
  if (!pending_.empty()) document_.pieces.push_back({std::move(pending_), -1});
  pending_.clear();
  return std::move(document_);
}

namespace {

struct ParagraphWalk {
  const XmlPart& part;
  const std::function<bool(const XmlNode&)>& is_paragraph;
  const StretchReader& read;
  DocumentWriter out;
  std::vector<char> holds_paragraph;  // the node is a paragraph or has one inside

  void walk(int index) {
    const XmlNode& n = part.nodes[static_cast<std::size_t>(index)];
    if (n.type != XmlNode::Type::element) {
      out.literal(n.begin, n.end);
    } else if (is_paragraph(n)) {
      paragraph(index);
    } else {
      out.literal(n.begin, n.open_end);
      for (int c = n.first_child; c >= 0; c = part.nodes[static_cast<std::size_t>(c)].next) walk(c);
      out.literal(n.close_begin, n.end);
    }
  }
  void paragraph(int index) {
    const XmlNode& n = part.nodes[static_cast<std::size_t>(index)];
    out.literal(n.begin, n.open_end);
    std::vector<int> stretch;
    for (int c = n.first_child; c >= 0; c = part.nodes[static_cast<std::size_t>(c)].next) {
      if (holds_paragraph[static_cast<std::size_t>(c)]) {
        flush(stretch);
        walk(c);
      } else {
        stretch.push_back(c);
      }
    }
    flush(stretch);
    out.literal(n.close_begin, n.end);
  }
  void flush(std::vector<int>& stretch) {
    if (stretch.empty()) return;
    const std::size_t begin = part.nodes[static_cast<std::size_t>(stretch.front())].begin;
    const std::size_t end = part.nodes[static_cast<std::size_t>(stretch.back())].end;
    Stretch s = read(stretch);
    stretch.clear();
    if (!s.translated || s.begin < begin || s.end > end || s.begin > s.end) {
      out.literal(begin, end);
      return;
    }
    out.literal(begin, s.begin);
    out.segment(std::move(s.segment));
    out.literal(s.end, end);
  }
};

}  // namespace

Document read_paragraphs(const XmlPart& part, const std::string& format,
                         const std::function<bool(const XmlNode&)>& is_paragraph, const StretchReader& read) {
  ParagraphWalk w{part, is_paragraph, read, DocumentWriter(part, format), std::vector<char>(part.nodes.size(), 0)};
  // Nodes come parents first: from the last back, each marks its parent.
  for (std::size_t i = part.nodes.size(); i-- > 0;) {
    const XmlNode& n = part.nodes[i];
    if (n.type == XmlNode::Type::element && is_paragraph(n)) w.holds_paragraph[i] = 1;
    if (w.holds_paragraph[i] && n.parent >= 0) w.holds_paragraph[static_cast<std::size_t>(n.parent)] = 1;
  }
  for (int t : part.top) w.walk(t);
  return w.out.finish();
}

bool blank(std::string_view text) {
  for (char c : text)
    if (!is_space(c)) return false;
  return true;
}

}  // namespace attn::document::office
