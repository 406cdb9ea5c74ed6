#include "eval/tokenizer_13a.h"

#include <vector>

#include "eval/python_str.h"

namespace attn::eval {

namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (text.find(from) == std::string::npos) return;
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (std::size_t hit; (hit = text.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(text, pos, hit - pos);
    out += to;
  }
  out.append(text, pos);
  text = std::move(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The character class [\{-\~\[-\` -\&\(-\+\:-\@\/] of tokenizer_re.py.
bool is_split_punctuation(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// re.sub of a pattern that matches exactly two characters, (first)(second): scans left to right,
// and after a match resumes behind it. Working on bytes gives the same result as on code points,
// because every class involved either is ASCII or is "anything but an ASCII digit".
template <typename First, typename Second, typename Emit>
std::string substitute_pairs(const std::string& text, First first, Second second, Emit emit) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      emit(out, text[i], text[i + 1]);
      i += 2;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  std::string text(line);
  replace_all(text, "<skipped>", "");
  replace_all(text, "-\n", "");
  replace_all(text, "\n", " ");
  if (text.find('&') != std::string::npos) {
    replace_all(text, "&quot;", "\"");
    replace_all(text, "&amp;", "&");
    replace_all(text, "&lt;", "<");
    replace_all(text, "&gt;", ">");
  }

  // sacreBLEU pads the line with a space on each side, then
  // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
  text = " " + text + " ";
  std::string spaced;
  spaced.reserve(text.size() * 2);
  for (char c : text) {
    if (is_split_punctuation(c)) {
      spaced.append({' ', c, ' '});
    } else {
      spaced += c;
    }
  }

  const auto not_digit = [](char c) { return !is_digit(c); };
  // ([^0-9])([\.,]) -> "\1 \2 "
  spaced = substitute_pairs(spaced, not_digit, is_period_or_comma, [](std::string& out, char a, char b) {
    out.append({a, ' ', b, ' '});
  });
  // ([\.,])([^0-9]) -> " \1 \2"
  spaced = substitute_pairs(spaced, is_period_or_comma, not_digit, [](std::string& out, char a, char b) {
    out.append({' ', a, ' ', b});
  });
  // ([0-9])(-) -> "\1 \2 "
  spaced = substitute_pairs(
      spaced, is_digit, [](char c) { return c == '-'; },
      [](std::string& out, char a, char b) {
        out.append({a, ' ', b, ' '});
      });

  return join_python_split(spaced);
}

}  // namespace attn::eval
