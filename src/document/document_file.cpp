#include "document/document_file.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "document/html_document.h"
#include "document/markdown_document.h"
#include "document/text_document.h"

namespace attn::document {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

void append(DocumentTranslation& into, DocumentTranslation&& part, const std::string& prefix) {
  for (auto& s : part.sentences) into.sentences.push_back(std::move(s));
  for (auto& w : part.warnings) into.warnings.push_back(prefix + w);
  into.cut_sentences += part.cut_sentences;
  into.cropped_sentences += part.cropped_sentences;
}

}  // namespace

std::string format_name(Format f) {
  switch (f) {
    case Format::text:
      return "text";
    case Format::html:
      return "html";
    case Format::markdown:
      return "markdown";
    case Format::docx:
      return "docx";
    case Format::odt:
      return "odt";
  }
  return "text";
}

std::optional<Format> parse_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "text" || n == "txt") return Format::text;
  if (n == "html" || n == "htm") return Format::html;
  if (n == "markdown" || n == "md") return Format::markdown;
  if (n == "docx") return Format::docx;
  if (n == "odt") return Format::odt;
  return std::nullopt;
}

std::optional<Format> format_of_path(const std::string& path) {
  const auto dot = path.rfind('.');
  const auto slash = path.find_last_of("/\\");
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return std::nullopt;
  const std::string ext = lower(path.substr(dot + 1));
  if (ext == "markdown") return Format::markdown;
  return parse_format(ext);
}

const std::vector<std::string>& file_extensions() {
  static const std::vector<std::string> e = {".txt", ".html", ".htm", ".md", ".docx", ".odt"};
  return e;
}

FileTranslation translate_file(const std::string& bytes, Format format, const SentenceTranslator& translate,
                               const DocumentOptions& options, const OfficeLimits& limits) {
  FileTranslation out;
  if (format == Format::docx || format == Format::odt) {
    const OfficeFile file = read_office(bytes, format_name(format), limits);
    std::vector<std::string> parts;
    for (const OfficePart& part : file.parts) {
      DocumentTranslation t = translate_document(part.document, translate, options);
      parts.push_back(assemble(part.document, t.rendered));
      out.segments += static_cast<int>(part.document.segments.size());
      append(out.details, std::move(t), part.name + ": ");
    }
    out.bytes = write_office(bytes, file, parts);
    return out;
  }
  Document d;
  switch (format) {
    case Format::html:
      d = read_html(bytes);
      break;
    case Format::markdown:
      d = read_markdown(bytes);
      break;
    default:
      d = read_text(bytes);
      break;
  }
  out.details = translate_document(d, translate, options);
  out.bytes = assemble(d, out.details.rendered);
  out.segments = static_cast<int>(d.segments.size());
  return out;
}

std::string file_text(const std::string& bytes, Format format, std::size_t max_bytes, const OfficeLimits& limits) {
  std::vector<Document> documents;
  if (format == Format::docx || format == Format::odt) {
    for (OfficePart& p : read_office(bytes, format_name(format), limits).parts)
      documents.push_back(std::move(p.document));
  } else {
    documents.push_back(format == Format::html       ? read_html(bytes)
                        : format == Format::markdown ? read_markdown(bytes)
                                                     : read_text(bytes));
  }
  std::string out;
  for (const Document& d : documents)
    for (const Segment& s : d.segments) {
      if (out.size() >= max_bytes) break;
      out += s.text + "\n";
    }
  if (out.size() > max_bytes) {
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

}  // namespace attn::document
