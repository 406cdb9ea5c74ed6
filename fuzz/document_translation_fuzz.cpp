// libFuzzer target: an HTML document (html_document.h) translated by a made-up translator that
// reverses each sentence's words and says so in its alignment (document_translation.h): the
// sentences, the placeholders and line breaks taken out and put back, the spans placed on the
// reversed words and each segment composed again.
//
// Checked besides memory errors: the translator is called once, with one alignment flag per
// sentence; every translated segment renders to markup in which each element's open and close tags
// of the source appear exactly as often as in the source segment's own rendering (every tag once,
// none lost, none added).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "document/document_translation.h"
#include "document/html_document.h"
#include "fuzz_support.h"

namespace {

using namespace attn::document;

std::vector<SentenceTranslation> reverse(const std::vector<std::string>& sentences, const std::vector<bool>& aligned) {
  FUZZ_CHECK(sentences.size() == aligned.size(), "one alignment flag per sentence");
  std::vector<SentenceTranslation> out;
  for (const std::string& s : sentences) {
    std::istringstream in(s);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    std::reverse(words.begin(), words.end());
    SentenceTranslation t;
    for (std::size_t i = 0; i < words.size(); ++i) t.text += (i ? " " : "") + words[i];
    const int n = static_cast<int>(words.size());
    for (int i = 0; i < n; ++i) t.links.push_back({i, n - 1 - i});
    out.push_back(t);
  }
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  if (what.empty()) return 0;
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string html(reinterpret_cast<const char*>(data), size);
  Document d;
  try {
    d = read_html(html);
  } catch (const attn::Error&) {
    return 0;
  }
  int calls = 0;
  const SentenceTranslator translate = [&](const std::vector<std::string>& s, const std::vector<bool>& a) {
    ++calls;
    return reverse(s, a);
  };
  DocumentTranslation t;
  try {
    t = translate_document(d, translate, {});
  } catch (const attn::Error&) {
    return 0;
  }
  FUZZ_CHECK(calls <= 1, "the translator is called once a document");
  FUZZ_CHECK(t.rendered.size() == d.segments.size(), "one rendering a segment");
  for (std::size_t i = 0; i < d.segments.size(); ++i) {
    const Segment& seg = d.segments[i];
    const std::string before = render_segment(seg, d.escape);
    for (const Span& sp : seg.spans) {
      if (sp.kind == Span::Kind::text) continue;  // text: escaped like any other
      FUZZ_CHECK(count(t.rendered[i], sp.open) == count(before, sp.open), "a tag lost or added: " + sp.open);
      if (sp.kind == Span::Kind::element)
        FUZZ_CHECK(count(t.rendered[i], sp.close) == count(before, sp.close),
                   "a closing tag lost or added: " + sp.close);
    }
  }
  (void)assemble(d, t.rendered);
  return 0;
}
