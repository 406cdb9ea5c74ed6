#include "inspect/pharaoh.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "core/error.h"
#include "core/text_file.h"

namespace attn::inspect {

namespace {

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t') ++end;
    if (end > i) tokens.push_back(text.substr(i, end - i));
    i = end;
  }
  return tokens;
}

// A word index: decimal digits only (no sign), within int.
bool parse_index(std::string_view text, int& value) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace

void normalize(Alignment& alignment) {
  std::sort(alignment.begin(), alignment.end());
  alignment.erase(std::unique(alignment.begin(), alignment.end()), alignment.end());
}

std::string format_pharaoh(const Alignment& alignment) {
  Alignment sorted = alignment;
  normalize(sorted);
  std::string text;
  for (const Link& link : sorted) {
    if (!text.empty()) text += ' ';
    text += std::to_string(link.source) + "-" + std::to_string(link.target);
  }
  return text;
}

GoldAlignment parse_pharaoh_line(const std::string& text, const std::string& file, std::size_t line) {
  GoldAlignment gold;
  for (std::string_view token : split_whitespace(text)) {
    const std::size_t mark = token.find_first_of("-?");
    Link link;
    if (mark == std::string_view::npos || !parse_index(token.substr(0, mark), link.source) ||
        !parse_index(token.substr(mark + 1), link.target)) {
      throw_at(file, line,
               "bad link '" + std::string(token) +
                   "' (links are i-j for sure or i?j for possible, with 0-based word indices i of the "
                   "source and j of the target)");
    }
    if (token[mark] == '-') gold.sure.push_back(link);
    gold.possible.push_back(link);
  }
  normalize(gold.sure);
  normalize(gold.possible);
  return gold;
}

std::vector<GoldAlignment> read_pharaoh_file(const std::string& file) {
  const std::vector<std::string> lines = read_text_lines(file);
  std::vector<GoldAlignment> alignments;
  alignments.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) alignments.push_back(parse_pharaoh_line(lines[i], file, i + 1));
  return alignments;
}

TaggedWords parse_tagged_line(const std::string& text, const std::string& file, std::size_t line) {
  const std::size_t bar = text.find("|||");
  if (bar == std::string::npos || text.find("|||", bar + 3) != std::string::npos) {
    throw_at(file, line, "a tagged line is the source word indices, \" ||| \", then the target word indices");
  }
  TaggedWords tagged;
  const auto read_side = [&](std::string_view side, std::vector<int>& indices) {
    for (std::string_view token : split_whitespace(side)) {
      int index = 0;
      if (!parse_index(token, index)) {
        throw_at(file, line, "bad word index '" + std::string(token) + "' (0-based, digits only)");
      }
      indices.push_back(index);
    }
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  };
  read_side(std::string_view(text).substr(0, bar), tagged.source);
  read_side(std::string_view(text).substr(bar + 3), tagged.target);
  return tagged;
}

std::vector<TaggedWords> read_tagged_file(const std::string& file) {
  const std::vector<std::string> lines = read_text_lines(file);
  std::vector<TaggedWords> tagged;
  tagged.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) tagged.push_back(parse_tagged_line(lines[i], file, i + 1));
  return tagged;
}

}  // namespace attn::inspect
