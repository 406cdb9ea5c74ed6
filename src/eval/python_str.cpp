#include "eval/python_str.h"

#include <algorithm>

#include "eval/python_lowercase_data.h"
#include "core/utf8.h"

namespace attn::eval {

namespace {

bool is_ascii_whitespace(unsigned char c) { return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20); }

bool in_ranges(std::span<const CodePointRange> ranges, char32_t code_point) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), code_point,
                                [](char32_t cp, const CodePointRange& range) { return cp < range.first; });
  return after != ranges.begin() && code_point <= std::prev(after)->last;
}

bool is_case_ignorable(char32_t code_point) { return in_ranges(python_case_ignorable_ranges(), code_point); }

bool is_cased_not_ignorable(char32_t code_point) { return in_ranges(python_cased_not_ignorable_ranges(), code_point); }

// Lowercase of a single code point other than U+0130 and U+03A3, which need more than a table.
char32_t simple_lowercase(char32_t code_point) {
  const auto runs = python_lowercase_runs();
  auto after = std::upper_bound(runs.begin(), runs.end(), code_point,
                                [](char32_t cp, const LowercaseRun& run) { return cp < run.first; });
  if (after == runs.begin()) return code_point;
  const LowercaseRun& run = *std::prev(after);
  if (code_point > run.last || (code_point - run.first) % run.stride != 0) return code_point;
  return static_cast<char32_t>(static_cast<std::int64_t>(code_point) + run.delta);
}

// CPython's handle_capital_sigma(): final when a cased letter precedes (skipping case-ignorable
// characters) and no cased letter follows (skipping them too).
bool is_final_sigma(const std::vector<char32_t>& code_points, std::size_t i) {
  std::size_t before = i;
  while (before > 0 && is_case_ignorable(code_points[before - 1])) --before;
  if (before == 0 || !is_cased_not_ignorable(code_points[before - 1])) return false;
  std::size_t after = i + 1;
  while (after < code_points.size() && is_case_ignorable(code_points[after])) ++after;
  return after == code_points.size() || !is_cased_not_ignorable(code_points[after]);
}

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool is_python_whitespace(char32_t code_point) {
  if (code_point < 0x80) return is_ascii_whitespace(static_cast<unsigned char>(code_point));
  switch (code_point) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return code_point >= 0x2000 && code_point <= 0x200A;
  }
}

std::size_t python_whitespace_length_at(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return is_ascii_whitespace(lead) ? 1 : 0;
  // Every non-ASCII whitespace character starts with one of these bytes.
  if (lead != 0xC2 && lead != 0xE1 && lead != 0xE2 && lead != 0xE3) return 0;
  const DecodedCodePoint decoded = decode_utf8_at(text, pos);
  return is_python_whitespace(decoded.code_point) ? decoded.length : 0;
}

std::vector<std::string_view> split_python_whitespace(std::string_view text) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (const std::size_t ws = python_whitespace_length_at(text, pos)) {
      if (pos > start) pieces.push_back(text.substr(start, pos - start));
      pos += ws;
      start = pos;
    } else {
      ++pos;  // a continuation byte never starts whitespace, so stepping bytewise is safe
    }
  }
  if (pos > start) pieces.push_back(text.substr(start, pos - start));
  return pieces;
}

std::string_view rstrip_python_whitespace(std::string_view text) {
  std::size_t end = 0;  // one past the last non-whitespace character
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (const std::size_t ws = python_whitespace_length_at(text, pos)) {
      pos += ws;
    } else {
      end = ++pos;  // continuation bytes are never whitespace, so `end` lands after a whole character
    }
  }
  return text.substr(0, end);
}

std::string join_python_split(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::string_view piece : split_python_whitespace(text)) {
    if (!out.empty()) out += ' ';
    out += piece;
  }
  return out;
}

std::string remove_python_whitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::string_view piece : split_python_whitespace(text)) out += piece;
  return out;
}

std::string python_lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    for (char c : text) out += ascii_lower(c);
    return out;
  }
  std::vector<char32_t> code_points;
  std::vector<std::size_t> starts;
  for (std::size_t pos = 0; pos < text.size();) {
    const DecodedCodePoint decoded = decode_utf8_at(text, pos);
    code_points.push_back(decoded.code_point);
    starts.push_back(pos);
    pos += decoded.length;
  }
  starts.push_back(text.size());
  for (std::size_t i = 0; i < code_points.size(); ++i) {
    const char32_t cp = code_points[i];
    char32_t lower = cp;
    if (cp == 0x130) {
      out += "i\xCC\x87";  // U+0069 U+0307
      continue;
    }
    if (cp == 0x3A3) {
      lower = is_final_sigma(code_points, i) ? 0x3C2 : 0x3C3;
    } else if (cp >= 0x80) {
      lower = simple_lowercase(cp);
    } else {
      lower = static_cast<char32_t>(ascii_lower(static_cast<char>(cp)));
    }
    if (lower == cp) {
      out.append(text, starts[i], starts[i + 1] - starts[i]);  // keeps undecodable bytes as they were
    } else {
      append_utf8(out, lower);
    }
  }
  return out;
}

}  // namespace attn::eval
