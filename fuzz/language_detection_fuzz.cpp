// libFuzzer target: detect_language and detect_any_language (document/language_detection.h) on any
// bytes. Input: the allowed languages, comma-separated, byte 0xFF, the text (fuzz_support.h); without
// a 0xFF the whole input is the text, with en, es, fr, de and zh allowed.
//
// Checked besides memory errors: the results are sorted by confidence, most confident first, each
// confidence in (0, 100], each language one of the allowed (as spelled there) and named once; the
// text is read only up to its first invalid UTF-8 (the same answers for its valid prefix);
// detect_any_language names a code of lowercase letters ("" for none).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.h"
#include "document/language_detection.h"
#include "fuzz_support.h"

namespace {

std::vector<std::string> split_commas(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    out.emplace_back(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string describe(const std::vector<attn::document::DetectedLanguage>& result) {
  std::string out;
  for (const auto& d : result) out += d.language + " " + std::to_string(d.confidence) + "; ";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t separator = bytes.find(attn::fuzz::kPartSeparator);
  const std::vector<std::string> allowed = separator == std::string_view::npos
                                               ? std::vector<std::string>{"en", "es", "fr", "de", "zh"}
                                               : split_commas(bytes.substr(0, separator));
  const std::string_view text = separator == std::string_view::npos ? bytes : bytes.substr(separator + 1);

  const auto result = attn::document::detect_language(text, allowed);
  for (std::size_t i = 0; i < result.size(); ++i) {
    const auto& d = result[i];
    FUZZ_CHECK(d.confidence > 0 && d.confidence <= 100, describe(result));
    FUZZ_CHECK(std::find(allowed.begin(), allowed.end(), d.language) != allowed.end(), describe(result));
    FUZZ_CHECK(i == 0 || result[i - 1].confidence >= d.confidence, describe(result));
    for (std::size_t j = 0; j < i; ++j) FUZZ_CHECK(result[j].language != d.language, describe(result));
  }
  const std::string any = attn::document::detect_any_language(text);
  FUZZ_CHECK(std::all_of(any.begin(), any.end(), [](char c) { return c >= 'a' && c <= 'z'; }), any);

  if (const auto invalid = attn::find_invalid_utf8(text)) {
    const std::string_view prefix = text.substr(0, *invalid);
    FUZZ_CHECK(attn::document::detect_language(prefix, allowed) == result, describe(result));
    FUZZ_CHECK(attn::document::detect_any_language(prefix) == any, any);
  }
  return 0;
}
