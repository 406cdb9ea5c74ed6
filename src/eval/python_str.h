#pragma once
// The parts of Python's str that sacreBLEU leans on, over UTF-8: split(), rstrip() and lower().
// sacreBLEU splits tokens with str.split(), which breaks on every Unicode whitespace character
// (U+00A0, U+2009, U+3000, ...), not just ASCII space, so matching its scores needs the same rules.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::eval {

// Python's str.isspace(), the set str.split() and str.rstrip() use:
// U+0009..U+000D, U+001C..U+001F, U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_python_whitespace(char32_t code_point);

// Byte length of the whitespace character starting at text[pos], or 0 if there is none there.
std::size_t python_whitespace_length_at(std::string_view text, std::size_t pos);

// str.split(): the runs between whitespace, as views into `text`.
std::vector<std::string_view> split_python_whitespace(std::string_view text);

// str.rstrip()
std::string_view rstrip_python_whitespace(std::string_view text);

// ' '.join(str.split()): the pieces between whitespace, joined by single spaces.
std::string join_python_split(std::string_view text);

// ''.join(str.split()): the text with every whitespace character removed.
std::string remove_python_whitespace(std::string_view text);

// str.lower(): full Unicode lowercase mapping ('İ' becomes "i̇") and the Final_Sigma rule
// ('Σ' becomes 'ς' at the end of a word, 'σ' elsewhere), as in the Python the tables came from.
std::string python_lower(std::string_view text);

}  // namespace attn::eval
