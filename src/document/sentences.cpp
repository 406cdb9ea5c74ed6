// Sentences by ICU's sentence break iterator, run on a copy of the text in which the line breaks
// that continue a sentence (the next line goes on in lower case) are spaces of the same byte length,
// so that ICU's boundaries fall on the original text byte for byte. ICU takes every other line break
// as the end of a paragraph: a hard break.
//
// What ICU decides and this file keeps as it is:
// - a full stop followed by a space ends a sentence only if what follows does not go on in lower
//   case ("In 1 Cor. 13:4 love is patient." is one sentence; so are "3.14" and "2.5.1", no space);
// - "?" and "!" always end one; a closing quote or bracket stays with the sentence it closes
//   ('He said, "Go." Then he left.' is two);
// - an ellipsis of three full stops ends a sentence where one full stop would, before a capital
//   letter ("Yes... Okay." is two sentences, "Wait... what?" one); the one character "…" (U+2026)
//   never does: ICU does not count it as a sentence terminator ("Yes… Okay." is one);
// - ICU's suppressions for the language (the locale keyword ss=standard: "Mr.", "Mrs.", "Prof." in
//   English; "Sr.", "Sra.", "Dra." in Spanish), matched case-sensitively on the letters before the
//   full stop, at the end of any word; and the few more below, as whole words.
#include "document/sentences.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"

namespace attn::document {
namespace {

// Abbreviations after which ICU's data for the language still breaks before a capital letter or a
// number, though they nearly always go on (a title before a name, a page before its number). Not
// added to ICU's filter (FilteredBreakIteratorBuilder), which matches the end of any word ("Dr."
// would match "ADr.") and takes an abbreviation with inner full stops ("e.g.") only up to its first
// one, but checked on each of ICU's boundaries here: the abbreviation as a whole word, then spaces
// or tabs (not a line break), then the boundary. Case-sensitive. "etc." is not one: it ends
// sentences as often as not.
const std::vector<std::string_view>& extra_abbreviations(const std::string& language) {
  static const std::vector<std::string_view> none;
  static const std::vector<std::string_view> english = {"Dr.", "Drs.", "e.g.", "i.e.", "cf."};
  static const std::vector<std::string_view> spanish = {"Ud.",   "Uds.",  "Vd.",   "Vds.", "Srs.",
                                                        "Sres.", "Dres.", "Ing.",  "Arq.", "Gral.",
                                                        "EE.",   "pág.",  "págs.", "núm.", "cap."};
  if (language == "en") return english;
  if (language == "es") return spanish;
  return none;
}

[[noreturn]] void icu_failed(const std::string& what, UErrorCode status) {
  throw Error("sentences: ICU could not " + what + " (" + u_errorName(status) + ")");
}

// The locale of an ISO 639-1 code (or a BCP 47 tag such as "pt-BR"), without keywords; ICU's root
// rules for "" or for what is not a language tag.
icu::Locale locale_of(const std::string& language) {
  if (language.empty() || language.size() > 64) return icu::Locale::getRoot();
  std::string tag = language;
  for (char& c : tag) {
    if (c == '_') c = '-';
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) return icu::Locale::getRoot();
  }
  UErrorCode status = U_ZERO_ERROR;
  const icu::Locale parsed = icu::Locale::forLanguageTag(tag, status);
  if (U_FAILURE(status) || parsed.isBogus()) return icu::Locale::getRoot();
  return icu::Locale(parsed.getBaseName());
}

struct Splitter {
  std::unique_ptr<icu::BreakIterator> iterator;  // with the locale's suppressions ("ss=standard")
  const std::vector<std::string_view>* abbreviations = nullptr;
};

Splitter make_splitter(const std::string& language) {
  icu::Locale locale = locale_of(language);
  UErrorCode status = U_ZERO_ERROR;
  locale.setKeywordValue("ss", "standard", status);
  if (U_FAILURE(status)) icu_failed("ask for the sentence break suppressions", status);
  Splitter splitter;
  splitter.iterator.reset(icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status) || !splitter.iterator) icu_failed("make a sentence break iterator", status);
  splitter.abbreviations = &extra_abbreviations(locale.getLanguage());
  return splitter;
}

// One iterator per language and thread, made once (making one reads ICU's data: about a millisecond).
Splitter& splitter_for(const std::string& language) {
  thread_local std::unordered_map<std::string, Splitter> cache;
  auto found = cache.find(language);
  if (found != cache.end()) return found->second;
  if (cache.size() >= 32) cache.clear();  // codes from untrusted input cannot grow it without bound
  return cache.emplace(language, make_splitter(language)).first->second;
}

bool is_space(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)); }

// The length in bytes of the line break at text[pos] (LF, CR, CR LF, NEL, LS), 0 if none. The
// paragraph separator U+2029 is not one: it always ends a sentence, like a blank line.
std::size_t line_break_at(std::string_view text, std::size_t pos) {
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c == '\n') return 1;
  if (c == '\r') return pos + 1 < text.size() && text[pos + 1] == '\n' ? 2 : 1;
  if (c == 0xC2 && text.substr(pos, 2) == "\xC2\x85") return 2;      // U+0085 NEXT LINE
  if (c == 0xE2 && text.substr(pos, 3) == "\xE2\x80\xA8") return 3;  // U+2028 LINE SEPARATOR
  return 0;
}

bool is_line_break_code_point(char32_t c) {
  return c == U'\n' || c == U'\r' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

// The text with every line break that continues a sentence made spaces: one whose next line, after
// spaces and tabs, starts with a lower-case letter. A blank line never qualifies: the line break
// before it is followed by another line break (or by spaces and one), not a letter.
std::string join_continued_lines(std::string_view text) {
  std::string joined(text);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t length = line_break_at(text, pos);
    if (length == 0) {
      ++pos;
      continue;
    }
    std::size_t next = pos + length;
    while (next < text.size()) {
      const DecodedCodePoint d = decode_utf8_at(text, next);
      if (!is_space(d.code_point) || is_line_break_code_point(d.code_point)) {
        if (u_islower(static_cast<UChar32>(d.code_point))) joined.replace(pos, length, length, ' ');
        break;
      }
      next += d.length;
    }
    pos += length;
  }
  return joined;
}

// Whether the boundary at byte `boundary` of `text` comes after one of `abbreviations` as a whole
// word and horizontal whitespace (spaces, tabs, no-break spaces; no line break).
bool after_abbreviation(std::string_view text, std::size_t boundary,
                        const std::vector<std::string_view>& abbreviations) {
  std::size_t p = boundary;
  while (p > 0) {
    if (text[p - 1] == ' ' || text[p - 1] == '\t') {
      --p;
    } else if (p >= 2 && text.substr(p - 2, 2) == "\xC2\xA0") {  // U+00A0, as in "Sr.\u00A0García"
      p -= 2;
    } else {
      break;
    }
  }
  if (p == boundary) return false;
  for (std::string_view abbreviation : abbreviations) {
    if (p < abbreviation.size() || text.substr(p - abbreviation.size(), abbreviation.size()) != abbreviation) continue;
    std::size_t start = p - abbreviation.size();
    if (start == 0) return true;
    std::size_t before = start - 1;
    while (before > 0 && (static_cast<unsigned char>(text[before]) & 0xC0) == 0x80) --before;
    if (!u_isalnum(static_cast<UChar32>(decode_utf8_at(text, before).code_point))) return true;
  }
  return false;
}

}  // namespace

std::vector<TextRange> split_sentences(std::string_view text, const std::string& language) {
  if (auto bad = find_invalid_utf8(text)) {
    throw Error("sentences: invalid UTF-8 at byte " + std::to_string(*bad + 1), ErrorKind::invalid_argument);
  }
  if (text.size() >= static_cast<std::size_t>(INT32_MAX)) {
    throw Error("sentences: a text of " + std::to_string(text.size()) + " bytes is over ICU's limit of 2 GiB",
                ErrorKind::invalid_argument);
  }
  std::vector<TextRange> sentences;
  if (text.empty()) return sentences;

  // UTF-16 for ICU, with the byte offset of every UTF-16 unit (and of the end).
  const std::string joined = join_continued_lines(text);
  icu::UnicodeString utf16;
  std::vector<std::size_t> byte_of;
  byte_of.reserve(text.size() + 1);
  for (std::size_t pos = 0; pos < joined.size();) {
    const DecodedCodePoint d = decode_utf8_at(joined, pos);
    utf16.append(static_cast<UChar32>(d.code_point));
    byte_of.push_back(pos);
    if (d.code_point > 0xFFFF) byte_of.push_back(pos);  // the low surrogate: never a boundary
    pos += d.length;
  }
  byte_of.push_back(joined.size());

  Splitter& splitter = splitter_for(language);
  icu::BreakIterator& iterator = *splitter.iterator;
  iterator.setText(utf16);
  std::size_t begin = 0;
  iterator.first();
  for (int32_t boundary = iterator.next(); boundary != icu::BreakIterator::DONE; boundary = iterator.next()) {
    std::size_t end = byte_of[static_cast<std::size_t>(boundary)];
    if (end < joined.size() && after_abbreviation(joined, end, *splitter.abbreviations)) continue;
    const std::size_t next_begin = end;
    // Whitespace at either end stays between sentences (the original text: its line breaks are
    // whitespace where the joined copy has spaces).
    while (begin < end) {
      const DecodedCodePoint d = decode_utf8_at(text, begin);
      if (!is_space(d.code_point)) break;
      begin += d.length;
    }
    while (end > begin) {
      std::size_t last = end - 1;
      while (last > begin && (static_cast<unsigned char>(text[last]) & 0xC0) == 0x80) --last;
      if (!is_space(decode_utf8_at(text, last).code_point)) break;
      end = last;
    }
    if (begin < end) sentences.push_back({begin, end});
    begin = next_begin;
  }
  // The iterator keeps a reference to the text: leave it on one that outlives this call.
  static const icu::UnicodeString empty;
  iterator.setText(empty);
  return sentences;
}

namespace {

bool is_clause_punctuation(char32_t c) { return c == U',' || c == U';' || c == U':' || c == 0x2013 || c == 0x2014; }
bool is_dash(char32_t c) { return c == 0x2013 || c == 0x2014; }
// A space a line may not be broken at: the cut would undo what the writer asked for.
bool is_no_break_space(char32_t c) { return c == 0x00A0 || c == 0x2007 || c == 0x202F; }

}  // namespace

// The sentence as a whole is tried first (one call of `count`). Then each piece, from its first
// non-space character:
//  1. the longest prefix that fits, F characters, by doubling then halving (at most 2·log2(F) + 2
//     calls, the rest of the sentence as a whole among them only when every doubling before fitted:
//     then it is the last piece); one character that does not fit is a piece by itself;
//  2. within those F characters, the cut after the last clause punctuation (followed by whitespace,
//     or a dash), else before the last breaking space, else at F; a punctuation or space cut short
//     of F is checked with one call more each, and passed over if it does not fit (a count that is
//     not monotonic).
// So `count` is called at most 2·log2(n) + 4 times per piece (n: the sentence's characters), each
// time on a non-empty text of at most twice the F characters of the piece's search; every piece
// takes at least one character, so there are at most n pieces and the loop ends, after at most
// 1 + n·(2·log2(n) + 4) calls. The bytes handed to count, and our own work, are O(F log F) per
// piece: O(n log n) for the sentence when pieces are about as long as their F (words, characters,
// a tokenizer's tokens), O(n² log n) at the very worst (a count that lets long prefixes fit but not
// the cuts within them).
std::vector<TextRange> split_long_sentence(std::string_view text, TextRange sentence, int max_tokens,
                                           const std::function<int(std::string_view)>& count) {
  if (max_tokens < 1) {
    throw Error("split_long_sentence: max_tokens is " + std::to_string(max_tokens) + ", must be at least 1",
                ErrorKind::invalid_argument);
  }
  if (sentence.begin > sentence.end || sentence.end > text.size()) {
    throw Error("split_long_sentence: the range [" + std::to_string(sentence.begin) + ", " +
                    std::to_string(sentence.end) + ") is not within the text of " + std::to_string(text.size()) +
                    " bytes",
                ErrorKind::invalid_argument);
  }
  const std::string_view body = text.substr(sentence.begin, sentence.end - sentence.begin);
  if (auto bad = find_invalid_utf8(body)) {
    throw Error("split_long_sentence: invalid UTF-8 at byte " + std::to_string(sentence.begin + *bad + 1),
                ErrorKind::invalid_argument);
  }

  // The code points of the sentence: starts[i] is the byte (of `text`) where the i-th begins.
  std::vector<std::size_t> starts;
  std::vector<char32_t> points;
  for (std::size_t pos = sentence.begin; pos < sentence.end;) {
    const DecodedCodePoint d = decode_utf8_at(text, pos);
    starts.push_back(pos);
    points.push_back(d.code_point);
    pos += d.length;
  }
  const std::size_t n = points.size();
  starts.push_back(sentence.end);

  // The piece from code point i up to code point j (exclusive), without trailing whitespace.
  auto trimmed_end = [&](std::size_t i, std::size_t j) {
    while (j > i && is_space(points[j - 1])) --j;
    return j;
  };
  auto fits = [&](std::size_t i, std::size_t j) {
    const std::size_t e = trimmed_end(i, j);
    return count(text.substr(starts[i], starts[e] - starts[i])) <= max_tokens;
  };

  std::vector<TextRange> pieces;
  std::size_t last = n;  // the sentence without trailing whitespace
  while (last > 0 && is_space(points[last - 1])) --last;
  std::size_t i = 0;
  while (i < last && is_space(points[i])) ++i;
  if (i < last && fits(i, last)) return {{starts[i], starts[last]}};
  bool rest_tried = true;  // whether the rest from i is known not to fit
  while (i < last) {
    // The longest prefix of the rest that fits, by doubling then halving: i + good fits, i + bad
    // does not. The rest as a whole is tried only when every doubling before it fitted.
    std::size_t good = 0, bad = 0;
    for (std::size_t probe = 1;; probe *= 2) {
      if (probe >= last - i) {
        if (!rest_tried && fits(i, last)) good = last - i;
        bad = last - i;
        break;
      }
      if (!fits(i, i + probe)) {
        bad = probe;
        break;
      }
      good = probe;
    }
    if (good == last - i) {
      pieces.push_back({starts[i], starts[last]});
      break;
    }
    while (bad - good > 1) {
      const std::size_t middle = good + (bad - good) / 2;
      (fits(i, i + middle) ? good : bad) = middle;
    }
    std::size_t cut = i + (good == 0 ? 1 : good);  // one character that does not fit goes alone
    if (good > 0) {
      const std::size_t limit = i + good;  // the piece [i, limit) fits
      // After clause punctuation at k (the piece keeps it) followed by whitespace, or a dash either
      // way ("1,000" and "3:16" are not cut); before a space that is not a no-break one.
      std::size_t punctuation = 0, space = 0;
      for (std::size_t k = i + 1; k < limit; ++k) {
        if (is_clause_punctuation(points[k]) && (is_dash(points[k]) || (k + 1 < n && is_space(points[k + 1])))) {
          punctuation = k + 1;
        }
      }
      for (std::size_t k = i + 1; k <= limit && k < n; ++k) {
        if (is_space(points[k]) && !is_no_break_space(points[k])) space = k;
      }
      if (punctuation > 0 && (punctuation == limit || fits(i, punctuation))) {
        cut = punctuation;
      } else if (space > 0 && (space == limit || fits(i, space))) {
        cut = space;
      }
    }
    pieces.push_back({starts[i], starts[trimmed_end(i, cut)]});
    i = cut;
    while (i < last && is_space(points[i])) ++i;
    rest_tried = false;
  }
  return pieces;
}

}  // namespace attn::document
