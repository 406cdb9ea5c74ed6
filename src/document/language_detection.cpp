#include "document/language_detection.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>  // before CLD2's header, which uses FILE without including it
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <cld2/internal/compact_lang_det_impl.h>  // kCLDFlagFinish
#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>
#include <libexttextcat/textcat.h>

#include "core/utf8.h"

namespace attn::document {
namespace {

// Texts up to this size are read whole; a longer one is read as kSamples slices of kSampleBytes spread
// evenly over it. CLD2 takes the length as an int and its percentages overflow beyond ~30 MB; the
// slices also bound the time (CLD2 reads ~30 MB/s).
constexpr std::size_t kWholeTextBytes = 256 << 10;
constexpr std::size_t kSamples = 8;
constexpr std::size_t kSampleBytes = kWholeTextBytes / kSamples;

// The confidence's terms (the header gives the formula).
constexpr double kFullScore = 512;  // a normalized score at or above this is ordinary text
constexpr double kFullWords = 5;    // words and letters that make a text long enough to be sure of
constexpr double kFullLetters = 25;
constexpr double kShortWords = 3;  // below these, a text is short: CLD2 is asked again, with hints
constexpr double kShortLetters = 15;
constexpr double kUnreliableCap = 0.5;  // the length factor where CLD2 calls its answer unreliable
constexpr double kHintedFactor = 0.5;   // an answer that only the reading with hints gives
// Spanish found with hints where CLD2 first read Galician needs this share of Galician's score
// (hinted_score_needed). Chosen on the dev verses (bench/language_detection_eval, docs/results.md): the
// highest share that reads every old Spanish dev verse CLD2 calls Galician as Spanish; Galician itself
// scores about half as well as Spanish as it does as Galician.
constexpr double kGalicianAsSpanish = 0.85;
// CLD2 keeps at most four hinted languages (TrimCLDLangPriors in compact_lang_det_impl.cc).
constexpr std::size_t kMaxHints = 4;

// Beyond this many bytes CLD2 squeezes out text it finds repetitive (CheapSqueezeTriggerTest, from
// 2 KiB of one script) and may then find nothing in a text that says the same thing many times;
// kCLDFlagFinish reads such a text once, as it is.
constexpr std::size_t kSqueezeBytes = 2 << 10;

struct Cld2Answer {
  CLD2::Language language[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE};
  int percent[3] = {0, 0, 0};
  double score[3] = {0, 0, 0};
  int text_bytes = 0;
  bool reliable = false;
};

// Hints for CLD2: languages to expect.
struct Hints {
  std::string content_languages;  // "en,es": CLD2's content-language hint, "" for none
  CLD2::Language language = CLD2::UNKNOWN_LANGUAGE;
};

Cld2Answer run_cld2(const std::string& text, const Hints& h, int flags) {
  if (text.size() > kSqueezeBytes) flags |= CLD2::kCLDFlagFinish;
  const CLD2::CLDHints hints{h.content_languages.empty() ? nullptr : h.content_languages.c_str(), nullptr,
                             CLD2::UNKNOWN_ENCODING, h.language};
  Cld2Answer a;
  CLD2::ExtDetectLanguageSummary(text.data(), static_cast<int>(text.size()), /*is_plain_text=*/true, &hints, flags,
                                 a.language, a.percent, a.score, /*resultchunkvector=*/nullptr, &a.text_bytes,
                                 &a.reliable);
  return a;
}

// A language CLD2 names, not "unknown", "ignore", a script without a language (xx-Latn) or a joke
// (Pig Latin, Klingon: above X_BORK_BORK_BORK).
bool is_language(CLD2::Language lang) {
  return lang != CLD2::UNKNOWN_LANGUAGE && lang != CLD2::TG_UNKNOWN_LANGUAGE && lang >= 0 &&
         lang < CLD2::X_BORK_BORK_BORK;
}

// ISO 639-1 where there is one: CLD2's code without its region or script (zh-Hant -> zh,
// sr-ME -> sr), and the current codes for CLD2's withdrawn ones (iw -> he, jw -> jv). "" for no language.
std::string iso_code(CLD2::Language lang) {
  if (!is_language(lang)) return "";
  std::string code = CLD2::LanguageCode(lang);
  code = code.substr(0, code.find('-'));
  if (code == "iw") return "he";
  if (code == "jw") return "jv";
  return code;
}

// The languages a caller allows: the ISO code each stands for (as iso_code spells it), the caller's own
// spelling (what the results name), and CLD2's language (for the hints).
struct AllowedLanguage {
  std::string iso;
  std::string spelling;
  CLD2::Language lang;
};

std::vector<AllowedLanguage> read_allowed(const std::vector<std::string>& allowed) {
  std::vector<AllowedLanguage> out;
  for (const std::string& spelling : allowed) {
    // CLD2 reads "en", "pt-BR", "he" or "iw", but only in lower case.
    std::string primary = spelling.substr(0, spelling.find_first_of("-_"));
    for (char& c : primary) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    const CLD2::Language lang = CLD2::GetLanguageFromName(primary.c_str());
    const std::string iso = iso_code(lang);
    if (iso.empty()) continue;
    if (std::none_of(out.begin(), out.end(), [&](const AllowedLanguage& a) { return a.iso == iso; }))
      out.push_back({iso, spelling, lang});
  }
  return out;
}

// Scripts written without spaces between words: each character counts as a word, and as two
// letters (it carries about as much as two letters of an alphabet).
bool unspaced_script(char32_t c) {
  return (c >= 0x0E00 && c <= 0x0EFF) ||  // Thai, Lao
         (c >= 0x1000 && c <= 0x109F) ||  // Myanmar
         (c >= 0x1780 && c <= 0x17FF) ||  // Khmer
         (c >= 0x2E80 && c <= 0x2FDF) ||  // CJK radicals
         (c >= 0x3040 && c <= 0x30FF) ||  // Hiragana, Katakana
         (c >= 0x3400 && c <= 0x4DBF) ||  // CJK extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||  // CJK unified ideographs
         (c >= 0xF900 && c <= 0xFAFF) ||  // CJK compatibility ideographs
         (c >= 0x20000 && c <= 0x3FFFF);  // CJK extensions B and beyond
}

// A letter, roughly: ASCII letters, and every other code point but spaces, punctuation, symbols,
// emoji and private use. (Enough to count words; CLD2 itself decides what it scores.)
bool is_letter(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c <= 0xBF) return c == 0xAA || c == 0xB5 || c == 0xBA;
  if (c == 0xD7 || c == 0xF7) return false;
  if (c >= 0x2000 && c <= 0x2BFF) return false;  // punctuation, symbols, arrows, box drawing
  if (c >= 0x3000 && c <= 0x303F) return false;  // CJK punctuation
  if (c >= 0xE000 && c <= 0xF8FF) return false;  // private use
  if (c >= 0xFE30 && c <= 0xFE4F) return false;  // CJK compatibility forms
  if ((c >= 0xFF00 && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65)) return false;
  if (c >= 0xFFF0 && c <= 0xFFFF) return false;
  if (c >= 0x1F000 && c <= 0x1FAFF) return false;  // emoji, playing cards, mahjong
  return true;
}

struct TextSize {
  double words = 0;
  double letters = 0;
};

// Words and letters of valid UTF-8, counted only as far as the confidence needs (bounded time).
TextSize measure(std::string_view text) {
  TextSize size;
  bool in_word = false;
  for (std::size_t pos = 0; pos < text.size();) {
    const DecodedCodePoint d = decode_utf8_at(text, pos);
    pos += d.length;
    if (!is_letter(d.code_point)) {
      in_word = false;
    } else if (unspaced_script(d.code_point)) {
      size.words += 1;
      size.letters += 2;
      in_word = false;
    } else {
      if (!in_word) size.words += 1;
      size.letters += 1;
      in_word = true;
    }
    if (size.words > kFullWords && size.letters > kFullLetters) break;
  }
  return size;
}

// What CLD2 reads of `text`: its valid UTF-8 prefix, whole when short, else slices spread over it
// (cut at code point boundaries, joined by newlines).
std::string cld2_input(std::string_view text) {
  if (text.size() <= kWholeTextBytes) return std::string(text);
  const auto continuation = [&](std::size_t i) {
    return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  std::string out;
  out.reserve(kWholeTextBytes + kSamples);
  for (std::size_t i = 0; i < kSamples; ++i) {
    std::size_t begin = i * (text.size() - kSampleBytes) / (kSamples - 1);
    std::size_t end = begin + kSampleBytes;
    while (continuation(begin)) ++begin;
    while (end > begin && continuation(end)) --end;
    out.append(text.substr(begin, end - begin));
    out += '\n';
  }
  return out;
}

// A language among CLD2's top three, under the name a result gives it: its share of the text CLD2
// attributed to any language (the three percents, which CLD2 rounds and pads, made to sum to 1), and
// its normalized score.
struct Candidate {
  std::string name;
  double share;
  double score;
};

// The name of `lang` in results: the caller's spelling of it where `allowed` is given ("" if it is not
// allowed), else its ISO code.
std::string result_name(CLD2::Language lang, const std::vector<AllowedLanguage>* allowed) {
  const std::string iso = iso_code(lang);
  if (iso.empty() || !allowed) return iso;
  for (const AllowedLanguage& a : *allowed)
    if (a.iso == iso) return a.spelling;
  return "";
}

std::vector<Candidate> candidates(const Cld2Answer& a, const std::vector<AllowedLanguage>* allowed) {
  double total = 0;
  for (int i = 0; i < 3; ++i) total += std::max(a.percent[i], 0);
  std::vector<Candidate> out;
  for (int i = 0; i < 3 && total > 0; ++i) {
    const std::string name = result_name(a.language[i], allowed);
    if (name.empty() || a.percent[i] <= 0) continue;
    const double share = a.percent[i] / total;
    // zh and zh-Hant are one language here: their shares add up.
    auto same = std::find_if(out.begin(), out.end(), [&](const Candidate& c) { return c.name == name; });
    if (same != out.end()) {
      same->share += share;
      same->score = std::max(same->score, a.score[i]);
    } else {
      out.push_back({name, share, a.score[i]});
    }
  }
  return out;
}

double score_factor(double score) { return std::min(1.0, score / kFullScore); }

const std::string& best_of(const std::vector<Candidate>& cands) {
  return std::max_element(cands.begin(), cands.end(),
                          [](const Candidate& a, const Candidate& b) {
                            return a.share * score_factor(a.score) < b.share * score_factor(b.score);
                          })
      ->name;
}

double length_factor(const TextSize& size, bool reliable) {
  const double f = 0.2 + 0.8 * std::min({1.0, size.words / kFullWords, size.letters / kFullLetters});
  return reliable ? f : std::min(f, kUnreliableCap);
}

std::vector<DetectedLanguage> to_results(const std::vector<Candidate>& cands, double factor) {
  std::vector<DetectedLanguage> out;
  for (const Candidate& c : cands) {
    const double confidence = std::min(100.0, 100 * c.share * score_factor(c.score) * factor);
    const double rounded = std::round(confidence * 10) / 10;
    if (rounded > 0) out.push_back({c.name, rounded});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const DetectedLanguage& a, const DetectedLanguage& b) { return a.confidence > b.confidence; });
  return out;
}

// Whether CLD2's first reading points to `lang`: names it, or names a language of its close set (the
// groups of languages CLD2 itself finds hard to tell apart: es/pt/gl, id/ms, cs/sk, da/no/nn,
// hr/sr/bs/sr-ME, hi/mr/ne/bh, xh/zu, rw/rn, bo/dz).
bool points_to(const Cld2Answer& first, CLD2::Language lang) {
  for (int i = 0; i < 3; ++i) {
    if (!is_language(first.language[i])) continue;
    if (iso_code(first.language[i]) == iso_code(lang)) return true;
    const int set = CLD2::LanguageCloseSet(first.language[i]);
    if (set != 0 && set == CLD2::LanguageCloseSet(lang)) return true;
  }
  return false;
}

// The allowed languages to hint to CLD2 for a second reading: for a short text all of them where
// CLD2 takes that many, else (and for a longer text) those the first reading points to.
Hints hint_list(const std::vector<AllowedLanguage>& allowed, const Cld2Answer& first, bool short_text) {
  Hints hints;
  std::size_t count = 0;
  for (const AllowedLanguage& a : allowed) {
    if (allowed.size() > kMaxHints && !points_to(first, a.lang)) continue;
    if (++count > kMaxHints) break;
    if (!hints.content_languages.empty()) hints.content_languages += ',';
    hints.content_languages += CLD2::LanguageCode(a.lang);
    // CLD2 weighs a content-language hint of English far below the others' (W4 against W10 in
    // compact_lang_det_hint_code.cc: pages often declare English wrongly); its language hint (W8,
    // added) evens that out, else the hints lean to the other allowed languages.
    if (a.lang == CLD2::ENGLISH && short_text) hints.language = CLD2::ENGLISH;
  }
  return hints;
}

// What a language found only by the reading with hints must score to be an answer where the first
// reading found no allowed language: the first reading's best score, or kGalicianAsSpanish of it for
// Spanish where CLD2 read Galician. Old Spanish (RV1909's "fué", "á", "segaránse") is what CLD2 reads
// as Galician, its close relative, and Spanish then scores a little lower; Portuguese keeps the full
// bar, so that the hint does not make it Spanish.
double hinted_score_needed(const Cld2Answer& first, const Candidate& c, const std::vector<AllowedLanguage>& langs) {
  const auto allowed =
      std::find_if(langs.begin(), langs.end(), [&](const AllowedLanguage& a) { return a.spelling == c.name; });
  const bool galician_as_spanish =
      first.language[0] == CLD2::GALICIAN && allowed != langs.end() && allowed->lang == CLD2::SPANISH;
  return galician_as_spanish ? kGalicianAsSpanish * first.score[0] : first.score[0];
}

// The second opinion, where CLD2's readings name no allowed language: libexttextcat (LibreOffice's
// language guesser, Debian's libexttextcat; the n-gram fingerprints of libexttextcat-data), over all of
// its 160-odd languages, so that it can say a text is Portuguese. CLD2 now and then reads a plain
// sentence of one language as a far-off other, and is sure of it ("Clemente y misericordioso es Jehová,
// lento para la ira, y grande en misericordia.": Italian; "Mas ni á mí tu siervo, ni á Sadoc ...":
// Kinyarwanda), so that its reading with hints finds nothing either; textcat reads both as Spanish.
constexpr const char* kTextcatFolder = "/usr/share/libexttextcat/";
// A textcat answer is as sure as CLD2's would be for a text of its length, times this.
constexpr double kTextcatFactor = 0.5;

struct TextcatHandle {
  void* handle = nullptr;
  TextcatHandle() {
    const std::string conf = std::string(kTextcatFolder) + "fpdb.conf";
    handle = special_textcat_Init(conf.c_str(), kTextcatFolder);
    if (!handle)
      throw std::runtime_error(conf + ": cannot read libexttextcat's fingerprints (Debian's libexttextcat-data)");
  }
  ~TextcatHandle() { textcat_Done(handle); }
  TextcatHandle(const TextcatHandle&) = delete;
  TextcatHandle& operator=(const TextcatHandle&) = delete;
};

// Textcat's first language for `text` ("es--utf8" is "es"), "" where it finds the text too short or
// like no language. One handle a thread: textcat_Classify writes its answer into the handle.
std::string textcat_language(const std::string& text) {
  thread_local TextcatHandle textcat;
  const char* answer = textcat_Classify(textcat.handle, text.data(), text.size());
  if (!answer || answer[0] != '[') return "";
  std::string first(answer + 1);
  first = first.substr(0, first.find(']'));
  return first.substr(0, first.find('-'));
}

// Textcat's first language where it is allowed and CLD2's first reading did not name that language's
// close set: where CLD2 read Galician or Portuguese, CLD2's closer look stands (hinted_score_needed),
// and Portuguese does not become Spanish. Measured on the dev verses and on Portuguese and Galician UI
// messages (docs/results.md): it mends 2 of the dev verses' 8 misses, and reads 6 and 10 more of 26964
// and 22108 messages as Spanish.
std::vector<DetectedLanguage> textcat_results(const std::string& text, const std::vector<AllowedLanguage>& langs,
                                              const TextSize& size, const Cld2Answer& first) {
  const std::string found = textcat_language(text);
  if (found.empty()) return {};
  for (const AllowedLanguage& a : langs)
    if ((a.iso == found || CLD2::LanguageCode(a.lang) == found) && !points_to(first, a.lang))
      return to_results({{a.spelling, 1.0, kFullScore}}, length_factor(size, false) * kTextcatFactor);
  return {};
}

std::string_view valid_prefix(std::string_view text) {
  return text.substr(0, find_invalid_utf8(text).value_or(text.size()));
}

}  // namespace

std::vector<DetectedLanguage> detect_language(std::string_view text, const std::vector<std::string>& allowed) {
  const std::vector<AllowedLanguage> langs = read_allowed(allowed);
  text = valid_prefix(text);
  const TextSize size = measure(text);
  if (langs.empty() || size.letters == 0) return {};
  const std::string input = cld2_input(text);

  const Cld2Answer first = run_cld2(input, {}, CLD2::kCLDFlagBestEffort);
  const std::vector<Candidate> found = candidates(first, &langs);
  const bool short_text = size.words < kShortWords || size.letters < kShortLetters || !first.reliable;
  if (!found.empty() && !short_text) return to_results(found, length_factor(size, first.reliable));

  // A second reading, told which languages are allowed: CLD2 is then less easily led astray by a
  // related language (old Spanish read as Galician) or by the few letters of a short text.
  const Hints hints = hint_list(langs, first, short_text);
  // Where the second reading adds nothing: the first reading's answer, or textcat's where it has none.
  const auto without_hints = [&] {
    return found.empty() ? textcat_results(input, langs, size, first)
                         : to_results(found, length_factor(size, first.reliable));
  };
  if (hints.content_languages.empty()) return without_hints();
  const Cld2Answer second = run_cld2(input, hints, CLD2::kCLDFlagBestEffort);
  std::vector<Candidate> hinted = candidates(second, &langs);
  if (found.empty()) {
    // Only where the hinted language explains the text at least as well as CLD2's own first choice:
    // Portuguese stays Portuguese when only Spanish is allowed, however much the hint pushes.
    std::erase_if(hinted, [&](const Candidate& c) { return c.score < hinted_score_needed(first, c, langs); });
  }
  if (hinted.empty()) return without_hints();
  // As sure as the first reading where both name the same language first; less where only the
  // reading with hints finds that language.
  const bool agree = !found.empty() && best_of(found) == best_of(hinted);
  return to_results(hinted, length_factor(size, second.reliable) * (agree ? 1.0 : kHintedFactor));
}

std::string detect_any_language(std::string_view text) {
  text = valid_prefix(text);
  const TextSize size = measure(text);
  if (size.letters == 0) return "";
  const Cld2Answer first = run_cld2(cld2_input(text), {}, CLD2::kCLDFlagBestEffort);
  const std::vector<DetectedLanguage> results =
      to_results(candidates(first, nullptr), length_factor(size, first.reliable));
  return results.empty() ? "" : results.front().language;
}

}  // namespace attn::document
