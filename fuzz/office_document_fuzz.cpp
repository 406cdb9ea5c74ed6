// libFuzzer target: office files (document/office_document.h). The input is one package, read as a
// .docx and then as an .odt. A mutated package rarely gets past its CRCs to the XML inside, so an
// input that does not start as a zip does ("PK") is also packed as the main part of each format
// (word/document.xml, content.xml) and read: the paragraphs, runs and spans get fuzzed too.
//
// Checked besides memory errors: whenever a package reads, every segment's spans form a valid tree
// (check_segment); the package written back with its segments untranslated (write_office) reads
// again, as the same format, into the same parts with the same segment texts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <zip.h>

#include "core/error.h"
#include "document/office_document.h"
#include "fuzz_support.h"

namespace {

using attn::document::OfficeFile;

void check(const std::string& bytes, const std::string& format) {
  attn::document::OfficeLimits limits;  // small: each run stays fast
  limits.max_unpacked_bytes = 8u << 20;
  limits.max_entry_bytes = 4u << 20;
  OfficeFile file;
  try {
    file = attn::document::read_office(bytes, format, limits);
  } catch (const attn::Error&) {
    return;
  }
  std::vector<std::string> parts_xml;
  for (const auto& part : file.parts) {
    std::vector<std::string> rendered;
    for (std::size_t i = 0; i < part.document.segments.size(); ++i) {
      try {
        attn::document::check_segment(part.document.segments[i], i);
      } catch (const attn::Error& e) {
        FUZZ_CHECK(false, part.name + ": " + e.what());
      }
      rendered.push_back(attn::document::render_segment(part.document.segments[i], part.document.escape));
    }
    parts_xml.push_back(attn::document::assemble(part.document, rendered));
  }
  std::string written;
  try {
    written = attn::document::write_office(bytes, file, parts_xml);
  } catch (const attn::Error& e) {
    FUZZ_CHECK(false, std::string("write_office failed on a package that reads: ") + e.what());
  }
  // Written again, a part may pack differently (its ratio) and grow (.docx runs rebuilt).
  attn::document::OfficeLimits again_limits = limits;
  again_limits.max_ratio = 1e12;
  again_limits.max_unpacked_bytes *= 8;
  again_limits.max_entry_bytes *= 8;
  OfficeFile again;
  try {
    again = attn::document::read_office(written, format, again_limits);
  } catch (const attn::Error& e) {
    FUZZ_CHECK(false, std::string("the package written does not read: ") + e.what());
  }
  FUZZ_CHECK(again.parts.size() == file.parts.size(), format + ": another number of parts");
  for (std::size_t p = 0; p < file.parts.size(); ++p) {
    const auto& a = file.parts[p].document.segments;
    const auto& b = again.parts[p].document.segments;
    FUZZ_CHECK(again.parts[p].name == file.parts[p].name, "part " + again.parts[p].name);
    FUZZ_CHECK(a.size() == b.size(),
               file.parts[p].name + ": " + std::to_string(a.size()) + " segments, then " + std::to_string(b.size()));
    for (std::size_t i = 0; i < a.size(); ++i)
      FUZZ_CHECK(a[i].text == b[i].text, file.parts[p].name + ": '" + a[i].text + "' read back as '" + b[i].text + "'");
  }
}

// A package of stored entries, written by libzip.
std::string make_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  FUZZ_CHECK(buffer != nullptr, "libzip: no buffer");
  zip_source_keep(buffer);
  zip_t* za = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  FUZZ_CHECK(za != nullptr, "libzip: cannot open a new archive");
  for (const auto& [name, bytes] : entries) {
    zip_source_t* s = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(za, name.c_str(), s, 0);
    FUZZ_CHECK(i >= 0 && zip_set_file_compression(za, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0) == 0,
               "libzip: cannot add " + name);
  }
  FUZZ_CHECK(zip_close(za) == 0, "libzip: cannot write the archive");
  zip_stat_t st;
  zip_stat_init(&st);
  std::string out;
  if (zip_source_stat(buffer, &st) == 0 && zip_source_open(buffer) == 0) {
    out.resize(st.size);
    const zip_int64_t n = zip_source_read(buffer, out.data(), out.size());
    zip_source_close(buffer);
    FUZZ_CHECK(n == static_cast<zip_int64_t>(out.size()), "libzip: cannot read the archive back");
  }
  zip_source_free(buffer);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  check(bytes, "docx");
  check(bytes, "odt");
  if (bytes.compare(0, 2, "PK") != 0) {
    check(make_zip({{"[Content_Types].xml", "<Types/>"}, {"word/document.xml", bytes}}), "docx");
    check(make_zip({{"mimetype", "application/vnd.oasis.opendocument.text"}, {"content.xml", bytes}}), "odt");
  }
  return 0;
}
