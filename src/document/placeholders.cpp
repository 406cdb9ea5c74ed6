// Placeholders by one pass of hand-written matchers over the text (no std::regex: its backtracking
// recurses once per character and overflows the stack on long inputs). Each matcher reads at most
// the token it starts on (an e-mail address looks back at most 64 bytes), and the scan goes on after
// whatever matched, so the whole pass is linear in the text.
//
// Choices the header leaves open:
// - printf: %[argnum$][flags -+#0'][width][.precision][length hh h l ll L z j t q]conversion, the
//   conversions d i o u x X e E f F g G a A c s p n and Objective-C's @; "%%" is one too (a literal
//   percent in a format string, which must come out as it is). The space flag is not taken: "50% of"
//   would be "% o". A percentage glued to a word ("50%off", "20%de") is not a conversion either: a
//   bare one-letter conversion after a digit and before a letter is left as text.
// - braces: {}, {name}, {0}, {user_name}, {0:.2f}, {a.b[0]!r:>8} (Python's format fields), {{x}} and
//   {{ x }} (templates), { $x } and {$x} (Fluent), with a $ or % before them kept with them (${var},
//   Ruby's %{var}). Whitespace inside is only allowed around a template's name or a Fluent variable,
//   so { a b } and {1, 2} are text.
// - URLs: scheme:// (any scheme of letters, digits, + . -) or www., at the start of a word, up to
//   whitespace, a control character or one of " < > ; then without trailing . , ; : ! ? … 。 ，
//   and without closing brackets and quotes that have no opening one inside the URL.
// - e-mail: local@domain.tld, the local part of letters, digits and . _ + - (not starting or ending
//   with a dot), the domain two or more labels of letters, digits and -, the last of two or more
//   letters; "mailto:" before it is kept with it.
// Text that is not valid UTF-8 is read byte by byte, never an error: placeholders are ASCII.
#include "document/placeholders.h"

#include <unicode/uchar.h>

#include <iterator>
#include <utility>

#include "core/utf8.h"

namespace attn::document {
namespace {

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ascii_alnum(char c) { return is_ascii_letter(c) || is_ascii_digit(c); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_nocase(std::string_view text, std::size_t pos, std::string_view prefix) {
  if (text.size() - pos < prefix.size()) return false;
  for (std::size_t k = 0; k < prefix.size(); ++k) {
    if (lower(text[pos + k]) != prefix[k]) return false;
  }
  return true;
}

// ---------------------------------------------------------------- printf

bool is_conversion(char c) { return std::string_view("diouxXeEfFgGaAcspn@").find(c) != std::string_view::npos; }

// The end of the printf conversion at text[pos] == '%', or 0.
std::size_t match_printf(std::string_view text, std::size_t pos) {
  const std::size_t n = text.size();
  std::size_t p = pos + 1;
  if (p < n && text[p] == '%') return p + 1;
  // argnum$
  std::size_t q = p;
  while (q < n && is_ascii_digit(text[q])) ++q;
  if (q > p && q < n && text[q] == '$' && text[p] != '0') p = q + 1;
  while (p < n && std::string_view("-+#0'").find(text[p]) != std::string_view::npos) ++p;
  if (p < n && text[p] == '*') {
    ++p;
  } else {
    while (p < n && is_ascii_digit(text[p])) ++p;
  }
  if (p < n && text[p] == '.') {
    ++p;
    if (p < n && text[p] == '*') {
      ++p;
    } else {
      while (p < n && is_ascii_digit(text[p])) ++p;
    }
  }
  if (p < n && (text[p] == 'h' || text[p] == 'l') && p + 1 < n && text[p + 1] == text[p]) {
    p += 2;  // hh, ll
  } else if (p < n && std::string_view("hlLzjtq").find(text[p]) != std::string_view::npos) {
    ++p;
  }
  if (p >= n || !is_conversion(text[p])) return 0;
  const bool bare = p == pos + 1;
  // "50%off", "20%de descuento": a percentage, not a conversion.
  if (bare && pos > 0 && is_ascii_digit(text[pos - 1]) && p + 1 < n && is_ascii_letter(text[p + 1])) return 0;
  return p + 1;
}

// ---------------------------------------------------------------- braces

bool is_name_start(char c) { return is_ascii_letter(c) || c == '_'; }
bool is_name_char(char c) { return is_ascii_alnum(c) || c == '_'; }

// The end of a name ([A-Za-z_][A-Za-z0-9_]*) or of digits at p, or p.
std::size_t skip_name(std::string_view text, std::size_t p) {
  const std::size_t n = text.size();
  if (p < n && is_name_start(text[p])) {
    while (p < n && is_name_char(text[p])) ++p;
  } else {
    while (p < n && is_ascii_digit(text[p])) ++p;
  }
  return p;
}

std::size_t skip_spaces(std::string_view text, std::size_t p) {
  while (p < text.size() && text[p] == ' ') ++p;
  return p;
}

// Printable ASCII but for braces: what an index or a format spec may hold.
bool is_spec_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > ' ' && u < 0x7F && c != '{' && c != '}';
}

// A Python format field's body from p (after "{"): arg_name ("." name | "[" index "]")* ["!" r|s|a]
// [":" spec], the spec without whitespace or braces. Returns the position of the closing "}", or 0.
std::size_t match_format_field(std::string_view text, std::size_t p) {
  const std::size_t n = text.size();
  p = skip_name(text, p);
  while (p < n) {
    if (text[p] == '.') {
      const std::size_t q = skip_name(text, p + 1);
      if (q == p + 1) return 0;
      p = q;
    } else if (text[p] == '[') {
      std::size_t q = p + 1;
      while (q < n && is_spec_char(text[q]) && text[q] != ']') ++q;
      if (q == p + 1 || q >= n || text[q] != ']') return 0;
      p = q + 1;
    } else {
      break;
    }
  }
  if (p + 1 < n && text[p] == '!' && (text[p + 1] == 'r' || text[p + 1] == 's' || text[p + 1] == 'a')) p += 2;
  if (p < n && text[p] == ':') {
    ++p;
    while (p < n && is_spec_char(text[p])) ++p;
  }
  return p < n && text[p] == '}' ? p : 0;
}

// The end of the brace placeholder at text[pos] == '{', or 0.
std::size_t match_braces(std::string_view text, std::size_t pos) {
  const std::size_t n = text.size();
  // {{ name }} and {{name}}: a template's variable, dotted names allowed.
  if (pos + 1 < n && text[pos + 1] == '{') {
    std::size_t p = skip_spaces(text, pos + 2);
    const std::size_t name = p;
    while (p < n && (is_name_char(text[p]) || (text[p] == '.' && p > name))) ++p;
    if (p > name && text[p - 1] != '.') {
      p = skip_spaces(text, p);
      if (p + 1 < n && text[p] == '}' && text[p + 1] == '}') return p + 2;
    }
    return 0;  // "{{" is not a placeholder by itself (nor the "{" it starts with)
  }
  // { $name } and {$name}: Fluent's variables.
  {
    std::size_t p = skip_spaces(text, pos + 1);
    if (p < n && text[p] == '$' && p + 1 < n && is_name_start(text[p + 1])) {
      p = p + 1;
      while (p < n && (is_name_char(text[p]) || text[p] == '-')) ++p;
      p = skip_spaces(text, p);
      if (p < n && text[p] == '}') return p + 1;
      return 0;
    }
  }
  const std::size_t close = match_format_field(text, pos + 1);
  return close ? close + 1 : 0;
}

// ---------------------------------------------------------------- URLs

bool is_scheme_char(char c) { return is_ascii_alnum(c) || c == '+' || c == '.' || c == '-'; }

// Whether a URL or an address may start at pos: not in the middle of a word or of another URL.
bool at_word_start(std::string_view text, std::size_t pos) {
  if (pos == 0) return true;
  const char before = text[pos - 1];
  return !is_scheme_char(before) && before != '@' && before != '_' && before != '/';
}

// The end of the URL's body from `pos`: up to whitespace, a control character, " < or >.
std::size_t url_body_end(std::string_view text, std::size_t pos) {
  while (pos < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) {
      if (c <= 0x20 || c == 0x7F || c == '"' || c == '<' || c == '>') break;
      ++pos;
      continue;
    }
    const DecodedCodePoint d = decode_utf8_at(text, pos);
    if (d.valid &&
        (u_isUWhiteSpace(static_cast<UChar32>(d.code_point)) || u_iscntrl(static_cast<UChar32>(d.code_point))))
      break;
    pos += d.length;
  }
  return pos;
}

// The URL [begin, end) without the sentence's punctuation after it and without closing brackets
// and quotes that close nothing inside it. Linear: the pairs are counted once, then as they go.
std::size_t trim_url(std::string_view text, std::size_t begin, std::size_t end) {
  static constexpr std::string_view kTrailing[] = {".", ",", ";", ":", "!", "?", "\u2026", "\u3002", "\uFF0C"};
  struct Pair {
    std::string_view open, close;
  };
  static constexpr Pair kPairs[] = {{"(", ")"},           {"[", "]"},           {"{", "}"},
                                    {"'", "'"},           {"\u201C", "\u201D"}, {"\u2018", "\u2019"},
                                    {"\u00AB", "\u00BB"}, {"\u2039", "\u203A"}};
  constexpr std::size_t kPairCount = std::size(kPairs);
  auto count_in = [](std::string_view url, std::string_view what) {
    std::size_t found = 0;
    for (std::size_t p = url.find(what); p != std::string_view::npos; p = url.find(what, p + what.size())) ++found;
    return found;
  };
  std::size_t opens[kPairCount], closes[kPairCount];
  for (std::size_t k = 0; k < kPairCount; ++k) {
    const std::string_view url = text.substr(begin, end - begin);
    opens[k] = count_in(url, kPairs[k].open);
    closes[k] = kPairs[k].open == kPairs[k].close ? opens[k] : count_in(url, kPairs[k].close);
  }
  while (end > begin) {
    const std::string_view url = text.substr(begin, end - begin);
    bool trimmed = false;
    for (std::string_view t : kTrailing) {
      if (url.ends_with(t)) {
        end -= t.size();
        trimmed = true;
        break;
      }
    }
    if (trimmed) continue;
    for (std::size_t k = 0; k < kPairCount && !trimmed; ++k) {
      if (!url.ends_with(kPairs[k].close)) continue;
      const bool same = kPairs[k].open == kPairs[k].close;  // a straight quote: balanced if paired
      if (same ? opens[k] % 2 == 0 : opens[k] >= closes[k]) break;
      end -= kPairs[k].close.size();
      --closes[k];
      if (same) --opens[k];
      trimmed = true;
    }
    if (!trimmed) break;
  }
  return end;
}

// The end of the URL at pos (a word's start), or 0.
std::size_t match_url(std::string_view text, std::size_t pos) {
  std::size_t rest;  // where the URL's host begins
  if (starts_with_nocase(text, pos, "www.")) {
    rest = pos + 4;
    // A host name after it: "www.." or "www.)" is not a URL.
    if (rest >= text.size() || (!is_ascii_alnum(text[rest]) && static_cast<unsigned char>(text[rest]) < 0x80)) return 0;
  } else {
    if (!is_ascii_letter(text[pos])) return 0;
    std::size_t p = pos + 1;
    while (p < text.size() && p - pos < 32 && is_scheme_char(text[p])) ++p;
    if (text.substr(p, 3) != "://") return 0;
    rest = p + 3;
  }
  const std::size_t end = trim_url(text, pos, url_body_end(text, rest));
  return end > rest ? end : 0;
}

// ---------------------------------------------------------------- e-mail

bool is_local_char(char c) { return is_ascii_alnum(c) || c == '.' || c == '_' || c == '+' || c == '-'; }
bool is_label_char(char c) { return is_ascii_alnum(c) || c == '-'; }

// The address around the "@" at text[at], not starting before `floor`: [begin, end), or begin == end.
std::pair<std::size_t, std::size_t> match_email(std::string_view text, std::size_t at, std::size_t floor) {
  const std::size_t n = text.size();
  std::size_t begin = at;
  while (begin > floor && at - begin < 64 && is_local_char(text[begin - 1])) --begin;
  if (begin > floor && is_local_char(text[begin - 1])) return {at, at};  // longer than an address's 64
  while (begin < at && text[begin] == '.') ++begin;
  if (begin == at || text[at - 1] == '.') return {at, at};
  // Labels separated by single dots; the last of letters only, two or more.
  std::size_t p = at + 1, end = 0, last_label = 0, labels = 0;
  while (p < n && is_label_char(text[p]) && text[p] != '-') {
    const std::size_t label = p;
    while (p < n && is_label_char(text[p])) ++p;
    ++labels;
    end = p;
    last_label = label;
    if (p + 1 < n && text[p] == '.' && is_label_char(text[p + 1])) {
      ++p;
    } else {
      break;
    }
  }
  if (labels < 2 || end - last_label < 2) return {at, at};
  for (std::size_t k = last_label; k < end; ++k) {
    if (!is_ascii_letter(text[k])) return {at, at};
  }
  if (begin >= floor + 7 && starts_with_nocase(text, begin - 7, "mailto:")) begin -= 7;
  return {begin, end};
}

}  // namespace

std::vector<Placeholder> find_placeholders(std::string_view text) {
  std::vector<Placeholder> found;
  std::size_t done = 0;  // the end of the last placeholder
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    std::size_t end = 0;
    if ((is_ascii_letter(c)) && at_word_start(text, pos) && (end = match_url(text, pos))) {
      found.push_back({pos, end, "url"});
    } else if (c == '@') {
      const auto [begin, address_end] = match_email(text, pos, done);
      if (begin < address_end) {
        found.push_back({begin, address_end, "email"});
        end = address_end;
      }
    } else if ((c == '$' || c == '%') && pos + 1 < text.size() && text[pos + 1] == '{' &&
               (end = match_braces(text, pos + 1))) {
      found.push_back({pos, end, "braces"});
    } else if (c == '{' && (end = match_braces(text, pos))) {
      found.push_back({pos, end, "braces"});
    } else if (c == '%' && (end = match_printf(text, pos))) {
      found.push_back({pos, end, "printf"});
    }
    if (end > pos) {
      pos = done = end;
    } else {
      ++pos;
    }
  }
  return found;
}

}  // namespace attn::document
