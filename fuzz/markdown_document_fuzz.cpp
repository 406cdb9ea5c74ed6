// libFuzzer target: the Markdown reader (document/markdown_document.h), which reads a Markdown
// document into literal pieces and segments to translate. The input is the Markdown.
//
// Checked besides memory errors (attn::Error is the answer to invalid UTF-8 and NUL bytes): every
// segment passes check_segment, and the document written back untranslated (render_segment of each
// segment, assemble) is the input, byte for byte, whatever the input (Markdown has no malformed
// documents: the reader reports no warnings).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "document/document.h"
#include "document/markdown_document.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string markdown(reinterpret_cast<const char*>(data), size);
  attn::document::Document d;
  try {
    d = attn::document::read_markdown(markdown);
  } catch (const attn::Error&) {
    return 0;
  }
  FUZZ_CHECK(d.warnings.empty(), "a warning: " + d.warnings.front());
  std::vector<std::string> rendered;
  for (std::size_t i = 0; i < d.segments.size(); ++i) {
    try {
      attn::document::check_segment(d.segments[i], i);
    } catch (const attn::Error& e) {
      FUZZ_CHECK(false, e.what());
    }
    FUZZ_CHECK(!d.segments[i].text.empty(), "an empty segment " + std::to_string(i));
    rendered.push_back(attn::document::render_segment(d.segments[i], attn::document::Escape::none));
  }
  const std::string out = attn::document::assemble(d, rendered);
  FUZZ_CHECK(out == markdown, "written back as:\n" + out);
  return 0;
}
