#include "data/token_lines.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "core/error.h"
#include "core/text_file.h"
#include "core/utf8.h"

namespace attn::data {

namespace {

// Calls `handle(line, line_number)` for each line of `in`, without its line ending.
template <typename Handler>
void for_each_line(std::istream& in, const std::string& name, Handler&& handle) {
  std::string line;
  for (std::size_t number = 1; read_line(in, line); ++number) handle(line, number);
  if (in.bad()) throw_in(name, "read error");
}

}  // namespace

std::vector<std::string> split_at_spaces(std::string_view line) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < line.size()) {
    const auto end = std::min(line.find(' ', start), line.size());
    if (end > start) words.emplace_back(line.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::string encode_line(const Vocabulary& vocabulary, std::string_view line, bool pieces) {
  std::string text;
  const char* separator = "";
  if (pieces) {
    for (const auto& piece : vocabulary.encode_pieces(line)) text.append(std::exchange(separator, " ")).append(piece);
  } else {
    for (const auto id : vocabulary.encode(line)) text.append(std::exchange(separator, " ")).append(std::to_string(id));
  }
  return text;
}

std::string decode_line(const Vocabulary& vocabulary, std::string_view line, bool pieces) {
  const std::vector<std::string> words = split_at_spaces(line);
  if (pieces) return vocabulary.decode_pieces(words);
  std::vector<std::int32_t> ids;
  for (const auto& word : words) {
    std::int32_t id = 0;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (error != std::errc() || end != word.data() + word.size())
      throw Error(std::string("\"") + word + "\" is not a token id");
    ids.push_back(id);
  }
  return vocabulary.decode(ids);
}

void encode_lines(const Vocabulary& vocabulary, std::istream& in, const std::string& name, std::ostream& out,
                  bool pieces) {
  for_each_line(in, name, [&](const std::string& line, std::size_t number) {
    if (auto bad = find_invalid_utf8(line))
      throw_at(name, number, "invalid UTF-8 at byte " + std::to_string(*bad + 1) + " of the line");
    out << encode_line(vocabulary, line, pieces) << '\n';
  });
}

void decode_lines(const Vocabulary& vocabulary, std::istream& in, const std::string& name, std::ostream& out,
                  bool pieces) {
  for_each_line(in, name, [&](const std::string& line, std::size_t number) {
    try {
      out << decode_line(vocabulary, line, pieces) << '\n';
    } catch (const Error& e) {
      throw_at(name, number, e.what());
    }
  });
}

}  // namespace attn::data
