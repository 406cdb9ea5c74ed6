#pragma once
// Placeholders: pieces of a text that are not words to translate but must come out unchanged (a
// program fills them in, or they name a place): printf conversions (%s, %d, %1$s, %.2f, %%), brace
// placeholders ({name}, {0}, {{x}}, ${var}), URLs (http://, https://, ftp://, www.…) and e-mail
// addresses. The translation takes them out of the sentence and puts them back next to the
// translated words (document_translation.h).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::document {

struct Placeholder {
  std::size_t begin = 0, end = 0;  // bytes of the text
  std::string kind;                // "printf", "braces", "url", "email"
  bool operator==(const Placeholder&) const = default;
};

// Every placeholder of `text` in order, not overlapping. A URL or an address does not take the
// punctuation that ends its sentence ("see https://a.org/x." ends before the full stop; a closing
// bracket is kept only with its opening one inside the URL). A lone % (100 %, 50%) is not a printf
// conversion; a brace pair around spaces or sentence text ({ a b }) is not a placeholder.
std::vector<Placeholder> find_placeholders(std::string_view text);

}  // namespace attn::document
