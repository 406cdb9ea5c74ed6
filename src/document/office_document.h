#pragma once
// Office files: .docx (Office Open XML) and .odt (OpenDocument text), zip packages of XML. The text
// of each paragraph is translated; its runs (their formatting), styles, tables, images, headers,
// footers and every other part of the package are kept.
#include <cstdint>
#include <string>
#include <vector>

#include "document/document.h"

namespace attn::document {

// What a package may unpack to: a small file that unpacks to gigabytes (a zip bomb) is refused
// before it is unpacked.
struct OfficeLimits {
  std::uint64_t max_unpacked_bytes = 256ull << 20;  // all entries together
  std::uint64_t max_entry_bytes = 64ull << 20;      // one entry
  std::uint64_t max_entries = 10000;
  double max_ratio = 200;  // unpacked / packed, over the whole package
};

// One XML part of the package that holds text (word/document.xml, word/header1.xml, word/footnotes.xml,
// …; content.xml, styles.xml's header and footer text for .odt), read as a document whose literal
// pieces are the part's XML and whose segments are its paragraphs: per .docx paragraph (w:p) the
// text of its runs (w:r/w:t, w:tab and w:br as text or empty elements) with each run that differs in
// formatting from the paragraph's most common run as an element span whose open and close are that
// run's markup; the most common run's markup is outside_open/outside_close. .odt paragraphs and
// headings (text:p, text:h) likewise, text:span as elements, text:s/text:tab/text:line-break as text
// or empty elements. escape: Escape::xml.
struct OfficePart {
  std::string name;   // the zip entry
  Document document;  // format "docx" or "odt"
};

struct OfficeFile {
  std::string format;  // "docx" or "odt"
  std::vector<OfficePart> parts;
};

// Reads a package. `format` is "docx" or "odt"; a file whose content is not that format (another
// format, a zip without word/document.xml or content.xml, not a zip at all) is refused whatever its
// name says. Throws Error naming the problem: not a zip, a missing or unreadable part, XML that does
// not parse (with the part's name and line), over a limit (naming it), an encrypted entry.
OfficeFile read_office(const std::string& bytes, const std::string& format, const OfficeLimits& limits = {});

// The package again with each part's XML replaced by `parts_xml[i]` (assemble of its translated
// document, in the order of file.parts); every other entry copied unchanged, in the same order,
// compressed as before. Throws Error if the counts differ or the zip cannot be written.
std::string write_office(const std::string& original_bytes, const OfficeFile& file,
                         const std::vector<std::string>& parts_xml);

}  // namespace attn::document
