#pragma once
// A file translated whole in its format: plain text, HTML, Markdown, .docx or .odt. One entry point
// for every face (attn translate, the service's /translate and /translate_file, the C++ and Python
// APIs).
#include <optional>
#include <string>
#include <vector>

#include "document/document_translation.h"
#include "document/office_document.h"

namespace attn::document {

enum class Format { text, html, markdown, docx, odt };

std::string format_name(Format f);  // "text", "html", "markdown", "docx", "odt"
// "text"/"txt", "html"/"htm", "markdown"/"md", "docx", "odt" (any case); nullopt for anything else.
std::optional<Format> parse_format(const std::string& name);
// By the file name's extension (.txt, .html, .htm, .md, .markdown, .docx, .odt); nullopt otherwise.
std::optional<Format> format_of_path(const std::string& path);
// The extensions files may have, with their dot: LibreTranslate's /frontend/settings lists them.
const std::vector<std::string>& file_extensions();

struct FileTranslation {
  std::string bytes;            // the translated file
  DocumentTranslation details;  // sentences, warnings (each office part's prefixed with its name)
  int segments = 0;
};

// Reads `bytes` as `format` (the content must be that format, whatever a file name said), translates
// it with `translate` and writes it back. Throws Error naming what is wrong with the input.
FileTranslation translate_file(const std::string& bytes, Format format, const SentenceTranslator& translate,
                               const DocumentOptions& options, const OfficeLimits& limits = {});

// The text a file would have translated, its segments joined by line breaks, at most `max_bytes`
// (whole characters): what its language is detected from. Throws Error as translate_file does.
std::string file_text(const std::string& bytes, Format format, std::size_t max_bytes = 20000,
                      const OfficeLimits& limits = {});

}  // namespace attn::document
