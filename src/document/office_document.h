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
// text of its runs (w:r/w:t) with each run that differs in formatting (its w:rPr as written) from
// the paragraph's most common run as an element span whose open and close are that run's markup;
// runs side by side with the same formatting are one stretch of text (Word splits words over runs);
// the most common run's markup is outside_open/outside_close. w:hyperlink, w:ins, w:smartTag,
// w:fldSimple, … are elements around their runs; w:tab, w:br, drawings and other run content are
// empty elements, and so are bookmarks, w:proofErr, runs without text (field codes), content
// controls and math beside the runs (literal where they come before the first text or after the
// last). .odt paragraphs and headings (text:p, text:h) likewise, text:span, text:a and text:meta as
// elements, text:s/text:tab/text:line-break and everything else as empty elements. Tabs, breaks and
// extra spaces add nothing to the segment's text: "Tab<w:tab/>here" is the text "Tabhere" with the
// tab at 3. A paragraph with paragraphs inside (a text box, an .odt note) is cut around them into
// segments, and theirs are segments of their own. A paragraph without text (or only whitespace) stays
// literal. escape: Escape::xml.
//
// Untranslated, an .odt part is written back byte for byte (text escaped as &amp; &lt; &gt;, as
// LibreOffice and odfpy write it); a .docx part keeps every character's text and w:rPr, but its runs
// are rebuilt (merged, with xml:space="preserve"), so it is not the same bytes.
struct OfficePart {
  std::string name;   // the zip entry
  Document document;  // format "docx" or "odt"
};

struct OfficeFile {
  std::string format;             // "docx" or "odt"
  std::vector<OfficePart> parts;  // those with a segment; word/document.xml or content.xml first
};

// Reads a package. `format` is "docx" or "odt"; a file whose content is not that format (another
// format, a zip without word/document.xml or content.xml, not a zip at all) is refused whatever its
// name says. Throws Error naming the problem: not a zip, a missing or unreadable part, XML that does
// not parse (with the part's name and line; a DTD or an encoding other than UTF-8 is refused too),
// over a limit (naming it), an encrypted entry, an entry that unpacks to more than its header says
// (unpacking stops there), a damaged zip (libzip's consistency check of every entry's headers).
OfficeFile read_office(const std::string& bytes, const std::string& format, const OfficeLimits& limits = {});

// The package again with each part's XML replaced by `parts_xml[i]` (assemble of its translated
// document, in the order of file.parts); every other entry copied unchanged, in the same order,
// compressed as before. Throws Error if the counts differ or the zip cannot be written.
std::string write_office(const std::string& original_bytes, const OfficeFile& file,
                         const std::vector<std::string>& parts_xml);

}  // namespace attn::document
