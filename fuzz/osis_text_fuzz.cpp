// libFuzzer target: the OSIS cleaner (data/osis_text.h), which turns the markup of every verse of a
// SWORD module into training text. The input is one verse's markup.
//
// parse_osis_verse never throws; besides memory errors, the fuzzer checks the properties its header
// promises: the text is trimmed with single spaces, valid UTF-8 markup gives valid UTF-8 text, there
// is one list of Strong's numbers per word, and each word's numbers are among the verse's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.h"
#include "data/osis_text.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view markup(reinterpret_cast<const char*>(data), size);
  const attn::data::OsisVerse verse = attn::data::parse_osis_verse(markup);
  const std::string& text = verse.text;
  FUZZ_CHECK(text.empty() || (text.front() != ' ' && text.back() != ' '), "untrimmed text '" + text + "'");
  FUZZ_CHECK(text.find("  ") == std::string::npos, "a run of spaces in '" + text + "'");
  if (!attn::find_invalid_utf8(markup)) FUZZ_CHECK(!attn::find_invalid_utf8(text), "invalid UTF-8 in '" + text + "'");
  const std::size_t words = text.empty() ? 0 : 1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), ' '));
  FUZZ_CHECK(verse.word_strong_numbers.size() == words, std::to_string(verse.word_strong_numbers.size()) +
                                                            " lists of numbers for " + std::to_string(words) +
                                                            " words of '" + text + "'");
  for (const auto& numbers : verse.word_strong_numbers) {
    for (const auto& number : numbers) {
      FUZZ_CHECK(
          std::find(verse.strong_numbers.begin(), verse.strong_numbers.end(), number) != verse.strong_numbers.end(),
          "a word's number " + number + " is not among the verse's");
    }
  }
  return 0;
}
