#pragma once
// A block of text cut into the sentences a translation model takes one at a time, its layout kept:
// what lies between two sentences (spaces, line breaks, a blank line) is not part of either, so the
// block can be written back around the translated sentences exactly as it was.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::document {

struct TextRange {
  std::size_t begin = 0, end = 0;  // bytes; a sentence's range has no whitespace at either end
  bool operator==(const TextRange&) const = default;
};

// The sentences of `text` (UTF-8) in order, by ICU's sentence break iterator for `language` (an ISO
// 639-1 code such as "en" or "es"; "" or an unknown code: ICU's root rules), with ICU's suppressions
// for the language (abbreviations such as "Mr." or "Sr." do not end a sentence). Besides ICU's:
// - a blank line (a line break, optional spaces or tabs, another line break) always ends a sentence;
// - a single line break ends one where ICU would, or where the next line does not go on with a
//   lower-case letter (a heading, a list item, a verse per line); a sentence wrapped over lines, the
//   next line starting in lower case, stays one sentence;
// - no range is empty or all whitespace; whitespace (spaces, tabs, line breaks, U+00A0, U+3000) at a
//   sentence's ends is left between sentences.
// Throws Error if `text` is not valid UTF-8 (naming the byte offset).
std::vector<TextRange> split_sentences(std::string_view text, const std::string& language);

// A sentence too long for the model (`count` gives the tokens of a piece of text) cut into pieces of
// at most `max_tokens`: after the last clause punctuation ( , ; : and the dashes – — ) that keeps a
// piece within the limit, else at the last space that does, else (one very long word) at the last
// character boundary that does. Whitespace at the cuts is left between pieces. One piece, the whole
// range, when it already fits. `max_tokens` >= 1.
std::vector<TextRange> split_long_sentence(std::string_view text, TextRange sentence, int max_tokens,
                                           const std::function<int(std::string_view)>& count);

}  // namespace attn::document
