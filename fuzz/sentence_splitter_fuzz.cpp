// libFuzzer target: the sentence splitter (document/sentences.h), which cuts every block of a
// document into the sentences translated one at a time, the cutter of over-long sentences, and the
// placeholder finder (document/placeholders.h) run on the same text.
//
// Input: the language code, byte 0xFF, the text (fuzz_support.h); without 0xFF the whole input is
// the text and the language is "" (ICU's root rules). Further 0xFF bytes stay in the text, which is
// then invalid UTF-8: split_sentences must throw attn::Error for it, and only for it.
//
// Checked besides memory errors:
// - sentences: in order, not overlapping, within the text, non-empty, no whitespace at either end,
//   and nothing but whitespace between them (the layout can be written back around them);
// - split_long_sentence, on each sentence with characters and with words as the count and a limit
//   of 1 to 8: the pieces are in order inside the sentence, non-empty, trimmed, only whitespace
//   between them (they cover the sentence's other text in order), and each fits unless it is one
//   character alone;
// - placeholders: in order, not overlapping, within the text, non-empty, of a known kind.
#include <unicode/uchar.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"
#include "document/placeholders.h"
#include "document/sentences.h"
#include "fuzz_support.h"

namespace {

using attn::document::TextRange;

bool is_space_at(std::string_view text, std::size_t pos, std::size_t* length) {
  const attn::DecodedCodePoint d = attn::decode_utf8_at(text, pos);
  *length = d.length;
  return d.valid && u_isUWhiteSpace(static_cast<UChar32>(d.code_point));
}

// [from, to) is whitespace only, whole code points.
bool all_space(std::string_view text, std::size_t from, std::size_t to) {
  while (from < to) {
    std::size_t length = 0;
    if (!is_space_at(text, from, &length)) return false;
    from += length;
  }
  return from == to;
}

// The range has no whitespace at either end.
bool trimmed(std::string_view text, TextRange r) {
  std::size_t length = 0;
  if (is_space_at(text, r.begin, &length)) return false;
  std::size_t last = r.end - 1;
  while (last > r.begin && (static_cast<unsigned char>(text[last]) & 0xC0) == 0x80) --last;
  return !is_space_at(text, last, &length);
}

std::string describe(TextRange r) { return "[" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")"; }

// Ranges in order inside [from, to), non-empty, trimmed, whitespace between them and around them.
void check_ranges(std::string_view text, std::size_t from, std::size_t to, const std::vector<TextRange>& ranges,
                  const char* what) {
  std::size_t at = from;
  for (const TextRange& r : ranges) {
    FUZZ_CHECK(at <= r.begin && r.begin < r.end && r.end <= to,
               std::string(what) + " " + describe(r) + " out of order or empty after " + std::to_string(at));
    FUZZ_CHECK(all_space(text, at, r.begin), std::string(what) + ": text other than whitespace before " + describe(r));
    FUZZ_CHECK(trimmed(text, r), std::string(what) + " " + describe(r) + " has whitespace at an end");
    at = r.end;
  }
  FUZZ_CHECK(all_space(text, at, to), std::string(what) + ": text other than whitespace after the last");
}

int characters(std::string_view text) {
  int n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

int words(std::string_view text) {
  int n = 0;
  bool in_word = false;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t length = 0;
    const bool space = is_space_at(text, pos, &length);
    if (!space && !in_word) ++n;
    in_word = !space;
    pos += length;
  }
  return n;
}

void check_long_sentence(std::string_view text, TextRange sentence, int max_tokens, int (*count)(std::string_view)) {
  const auto pieces = attn::document::split_long_sentence(text, sentence, max_tokens, count);
  check_ranges(text, sentence.begin, sentence.end, pieces, "piece");
  FUZZ_CHECK(!pieces.empty(), "no pieces for the sentence " + describe(sentence));
  for (const TextRange& p : pieces) {
    const std::string_view piece = text.substr(p.begin, p.end - p.begin);
    FUZZ_CHECK(count(piece) <= max_tokens || characters(piece) == 1, "the piece " + describe(p) + " has " +
                                                                         std::to_string(count(piece)) +
                                                                         " tokens, over " + std::to_string(max_tokens));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string language;
  std::string_view text = bytes;
  if (const std::size_t separator = bytes.find(attn::fuzz::kPartSeparator); separator != std::string_view::npos) {
    language = std::string(bytes.substr(0, separator));
    text = bytes.substr(separator + 1);
  }

  const std::vector<attn::document::Placeholder> placeholders = attn::document::find_placeholders(text);
  std::size_t at = 0;
  for (const auto& p : placeholders) {
    FUZZ_CHECK(at <= p.begin && p.begin < p.end && p.end <= text.size(),
               "placeholder " + describe({p.begin, p.end}) + " out of order or empty");
    FUZZ_CHECK(p.kind == "printf" || p.kind == "braces" || p.kind == "url" || p.kind == "email",
               "placeholder of kind '" + p.kind + "'");
    at = p.end;
  }

  std::vector<TextRange> sentences;
  try {
    sentences = attn::document::split_sentences(text, language);
  } catch (const attn::Error& e) {
    FUZZ_CHECK(attn::find_invalid_utf8(text).has_value(), std::string("an error for valid UTF-8: ") + e.what());
    return 0;
  }
  FUZZ_CHECK(!attn::find_invalid_utf8(text), "no error for invalid UTF-8");
  check_ranges(text, 0, text.size(), sentences, "sentence");

  std::size_t checked = 0;
  for (const TextRange& s : sentences) {
    if (++checked > 32) break;  // enough to fuzz the cutter; more only slows each run
    check_long_sentence(text, s, 1 + static_cast<int>(s.begin % 8), characters);
    check_long_sentence(text, s, 1 + static_cast<int>(s.end % 4), words);
  }
  return 0;
}
