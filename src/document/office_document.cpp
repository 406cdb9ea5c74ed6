// The package side of office files: the zip read from memory with libzip, its limits checked before
// anything is unpacked, the parts that hold text read (docx_document.cpp, odt_document.cpp), and the
// package written again with those parts replaced and every other entry copied as it was.
#include "document/office_document.h"

#include <zip.h>

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "document/office_xml.h"

namespace attn::document {

namespace {

constexpr std::string_view kOdtMimetype = "application/vnd.oasis.opendocument.text";

std::string label(const std::string& format) { return format == "docx" ? ".docx file" : ".odt file"; }
std::string not_a(const std::string& format) { return format == "docx" ? "not a .docx file" : "not an .odt file"; }

std::string zip_message(zip_error_t* error) { return zip_error_strerror(error); }

struct ZipCloser {
  void operator()(zip_t* za) const { zip_discard(za); }
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;

// `bytes` must outlive the archive: libzip reads it in place.
Zip open_zip(const std::string& bytes, int flags, zip_source_t** source_out, const std::string& format) {
  if (bytes.empty()) throw Error(not_a(format) + ": empty, not a zip archive");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    const std::string m = zip_message(&error);
    zip_error_fini(&error);
    throw Error(label(format) + ": libzip could not read the bytes (" + m + ")");
  }
  if (source_out) zip_source_keep(source);  // the caller reads the archive written into it
  zip_t* za = zip_open_from_source(source, flags, &error);
  if (za == nullptr) {
    const std::string m = zip_message(&error);
    zip_error_fini(&error);
    zip_source_free(source);
    if (source_out) zip_source_free(source);
    throw Error(not_a(format) + ": not a zip archive, or a damaged one (" + m + ")");
  }
  zip_error_fini(&error);
  if (source_out) *source_out = source;
  return Zip(za);
}

struct Entry {
  std::string name;
  std::uint64_t size = 0;
};

// Every entry's sizes as its header gives them, against the limits, before anything is unpacked.
std::vector<Entry> check_limits(zip_t* za, const std::string& format, const OfficeLimits& limits) {
  const zip_int64_t count = zip_get_num_entries(za, 0);
  if (count < 0) throw Error(label(format) + ": libzip cannot count its entries");
  if (static_cast<std::uint64_t>(count) > limits.max_entries)
    throw Error(label(format) + ": " + std::to_string(count) + " entries, over the limit of " +
                std::to_string(limits.max_entries) + " (max_entries)");
  std::vector<Entry> entries;
  std::uint64_t unpacked = 0, packed = 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
      throw Error(label(format) + ": entry " + std::to_string(i) + " is unreadable (" +
                  zip_error_strerror(zip_get_error(za)) + ")");
    const std::string name = st.name;
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      throw Error(label(format) + ": entry " + name + " is encrypted; encrypted packages are not read");
    if (st.size > limits.max_entry_bytes)
      throw Error(label(format) + ": entry " + name + " unpacks to " + std::to_string(st.size) +
                  " bytes, over the limit of " + std::to_string(limits.max_entry_bytes) +
                  " bytes for one entry (max_entry_bytes)");
    unpacked += st.size;  // each within max_entry_bytes: no overflow for any sane limit
    packed += st.comp_size;
    if (unpacked > limits.max_unpacked_bytes)
      throw Error(label(format) + ": its entries unpack to over " + std::to_string(limits.max_unpacked_bytes) +
                  " bytes, the limit for the whole package (max_unpacked_bytes)");
    entries.push_back({name, st.size});
  }
  if (unpacked > 0 &&
      static_cast<double>(unpacked) > limits.max_ratio * static_cast<double>(std::max<std::uint64_t>(packed, 1)))
    throw Error(label(format) + ": " + std::to_string(packed) + " packed bytes unpack to " + std::to_string(unpacked) +
                ", over the limit of " + std::to_string(static_cast<long long>(limits.max_ratio)) +
                " times (max_ratio): a zip bomb?");
  return entries;
}

// Unpacks one entry, trusting its header's size no further than the limits did: more bytes than it
// says stop the reading.
std::string read_entry(zip_t* za, zip_int64_t index, const Entry& entry, const std::string& format) {
  zip_file_t* f = zip_fopen_index(za, static_cast<zip_uint64_t>(index), 0);
  if (f == nullptr)
    throw Error(label(format) + ": entry " + entry.name + " is unreadable (" + zip_error_strerror(zip_get_error(za)) +
                ")");
  std::string out;
  out.reserve(entry.size);
  char buffer[1 << 16];
  while (true) {
    const zip_int64_t n = zip_fread(f, buffer, sizeof buffer);
    if (n < 0) {
      const std::string m = zip_file_strerror(f);
      zip_fclose(f);
      throw Error(label(format) + ": entry " + entry.name + " is damaged (" + m + ")");
    }
    if (n == 0) break;
    if (static_cast<std::uint64_t>(n) > entry.size - out.size()) {
      zip_fclose(f);
      throw Error(label(format) + ": entry " + entry.name + " unpacks to more than the " + std::to_string(entry.size) +
                  " bytes its header says");
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  zip_fclose(f);
  if (out.size() != entry.size)
    throw Error(label(format) + ": entry " + entry.name + " unpacks to " + std::to_string(out.size()) +
                " bytes, not the " + std::to_string(entry.size) + " its header says");
  return out;
}

zip_int64_t locate(zip_t* za, const std::string& name) { return zip_name_locate(za, name.c_str(), 0); }

bool starts_with(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, std::string_view p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// The entries whose paragraphs are translated, the main one first, the others in the package's order.
std::vector<std::string> text_parts(zip_t* za, const std::vector<Entry>& entries, const std::string& format) {
  std::vector<std::string> parts;
  if (format == "docx") {
    for (const char* needed : {"[Content_Types].xml", "word/document.xml"})
      if (locate(za, needed) < 0) throw Error(not_a(format) + ": no " + needed + " in the package");
    parts.push_back("word/document.xml");
    for (const Entry& e : entries) {
      const std::string& n = e.name;
      const bool numbered = (starts_with(n, "word/header") || starts_with(n, "word/footer")) && ends_with(n, ".xml") &&
                            n.find('/', 5) == std::string::npos;
      if (numbered || n == "word/footnotes.xml" || n == "word/endnotes.xml" || n == "word/comments.xml")
        parts.push_back(n);
    }
  } else {
    const zip_int64_t m = locate(za, "mimetype");
    if (m < 0) throw Error(not_a(format) + ": no mimetype entry in the package");
    const Entry& e = entries[static_cast<std::size_t>(m)];
    if (e.size > 256) throw Error(not_a(format) + ": its mimetype entry is " + std::to_string(e.size) + " bytes long");
    const std::string mimetype = read_entry(za, m, e, format);
    if (mimetype != kOdtMimetype) {
      std::string shown;
      for (char c : mimetype) shown += (c >= 0x20 && c < 0x7F) ? c : '?';
      throw Error(not_a(format) + ": its mimetype is '" + shown + "', not " + std::string(kOdtMimetype));
    }
    if (locate(za, "content.xml") < 0) throw Error(not_a(format) + ": no content.xml in the package");
    parts.push_back("content.xml");
    if (locate(za, "styles.xml") >= 0) parts.push_back("styles.xml");
  }
  return parts;
}

}  // namespace

OfficeFile read_office(const std::string& bytes, const std::string& format, const OfficeLimits& limits) {
  if (format != "docx" && format != "odt")
    throw Error("office files: unknown format '" + format + "' (docx or odt)", ErrorKind::invalid_argument);
  const Zip za = open_zip(bytes, ZIP_RDONLY | ZIP_CHECKCONS, nullptr, format);
  const std::vector<Entry> entries = check_limits(za.get(), format, limits);
  OfficeFile file;
  file.format = format;
  for (const std::string& name : text_parts(za.get(), entries, format)) {
    const zip_int64_t index = locate(za.get(), name);
    office::XmlPart part =
        office::parse_part(name, read_entry(za.get(), index, entries[static_cast<std::size_t>(index)], format));
    Document document = format == "docx" ? read_docx_part(part) : read_odt_part(part);
    if (!document.segments.empty()) file.parts.push_back({name, std::move(document)});
  }
  return file;
}

std::string write_office(const std::string& original_bytes, const OfficeFile& file,
                         const std::vector<std::string>& parts_xml) {
  const std::string format = file.format == "docx" ? "docx" : "odt";
  if (parts_xml.size() != file.parts.size())
    throw Error(label(format) + ": " + std::to_string(parts_xml.size()) + " translated parts for " +
                std::to_string(file.parts.size()));
  zip_source_t* source = nullptr;
  Zip za = open_zip(original_bytes, ZIP_CHECKCONS, &source, format);
  const auto free_source = [](zip_source_t* s) { zip_source_free(s); };
  std::unique_ptr<zip_source_t, decltype(free_source)> kept(source, free_source);
  for (std::size_t i = 0; i < parts_xml.size(); ++i) {
    const std::string& name = file.parts[i].name;
    const zip_int64_t index = locate(za.get(), name);
    zip_stat_t st;
    zip_stat_init(&st);
    if (index < 0 || zip_stat_index(za.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0)
      throw Error(label(format) + ": no entry " + name + " in the package to write");
    zip_source_t* part = zip_source_buffer(za.get(), parts_xml[i].data(), parts_xml[i].size(), 0);
    if (part == nullptr || zip_file_replace(za.get(), static_cast<zip_uint64_t>(index), part, 0) < 0) {
      if (part) zip_source_free(part);
      throw Error(label(format) + ": cannot replace " + name + " (" + zip_strerror(za.get()) + ")");
    }
    // Stored stays stored (an .odt's mimetype must be), anything else is deflated.
    const bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
    if (zip_set_file_compression(za.get(), static_cast<zip_uint64_t>(index), stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE,
                                 0) < 0 ||
        ((st.valid & ZIP_STAT_MTIME) &&
         zip_file_set_mtime(za.get(), static_cast<zip_uint64_t>(index), st.mtime, 0) < 0))
      throw Error(label(format) + ": cannot set how " + name + " is written (" + zip_strerror(za.get()) + ")");
  }
  // Unchanged entries are copied as they are, compressed bytes and all; nothing else is unpacked.
  if (zip_close(za.get()) < 0)
    throw Error(label(format) + ": cannot write the package (" + std::string(zip_strerror(za.get())) + ")");
  za.release();
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_is_deleted(source) || zip_source_stat(source, &st) < 0 || !(st.valid & ZIP_STAT_SIZE) ||
      zip_source_open(source) < 0)
    throw Error(label(format) + ": cannot read the package written");
  std::string out(static_cast<std::size_t>(st.size), '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    const zip_int64_t n = zip_source_read(source, out.data() + done, out.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  zip_source_close(source);
  if (done != out.size()) throw Error(label(format) + ": cannot read the package written");
  return out;
}

}  // namespace attn::document
