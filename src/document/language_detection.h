#pragma once
// The language of a text, by CLD2 (Chrome's Compact Language Detector 2, Debian's libcld2) with
// libexttextcat's second opinion, among the languages a service translates from: LibreTranslate's
// /detect and source "auto".
//
// What CLD2 reads: the text's valid UTF-8 prefix (it misreads invalid UTF-8, so the text is cut at the
// first invalid byte), whole up to 256 KiB; a longer text as 8 slices of 32 KiB spread evenly over it
// (bounded time; CLD2's percentages overflow on tens of megabytes). Beyond 2 KiB CLD2 reads with its
// kCLDFlagFinish, else it squeezes out what it finds repetitive and may find nothing in a text that
// says the same thing many times.
//
// Language codes: ISO 639-1 where there is one. CLD2's codes lose their script or region (zh-Hant is
// "zh": Chinese in either script; sr-ME is "sr") and its withdrawn codes are replaced (iw is "he", jw
// is "jv"); codes without a two-letter form stay as CLD2 gives them ("haw", "ceb").
#include <string>
#include <string_view>
#include <vector>

namespace attn::document {

struct DetectedLanguage {
  std::string language;   // the caller's spelling of the allowed language (detect_language's `allowed`)
  double confidence = 0;  // 0 to 100, as LibreTranslate reports it (rounded to 0.1; never 0)
  bool operator==(const DetectedLanguage&) const = default;
};

// The candidates among `allowed` for `text`, most confident first: high for a long text CLD2 reads in
// one language, low for a short or mixed one (a single word is never above 50). Empty when nothing in
// the text is detectable (no letters), when `allowed` names no language CLD2 knows, or when none of
// the allowed languages is among CLD2's findings. Invalid UTF-8 is read as far as it is valid.
//
// `allowed` holds language codes, matched on their primary subtag without regard to case and with
// CLD2's synonyms ("es-MX", "ES" and "es" are Spanish; "he" and "iw" Hebrew; "nb" and "no" Norwegian;
// "zh" and "zh-Hant" Chinese); results name each language as `allowed` first spells it. Codes CLD2 does
// not know are ignored.
//
// How: CLD2 reads the text once without hints (with kCLDFlagBestEffort, so that it answers for short
// texts at all); its three best languages that are allowed are the answer, unless the text is short
// (fewer than 3 words or 15 letters, or CLD2 calls its reading unreliable) or none of them is allowed.
// Then CLD2 reads it again with the allowed languages as content-language hints (all of them where
// they are at most 4, the most CLD2 takes; else those the first reading names or puts in one of
// CLD2's close sets, such as es/pt/gl; English, which CLD2 trusts less as a hint, also as its language
// hint when the text is short). The second reading's allowed languages are the answer; where the first
// reading found none of the allowed languages, only those whose normalized score is at least that of
// the first reading's best language, or at least 85% of it for Spanish where that language is
// Galician (so that the hint does not turn Portuguese into Spanish, while old Spanish read as
// Galician is found to be Spanish; Galician itself scores about half as well as Spanish).
// Where neither reading names an allowed language, a second detector has its say: libexttextcat
// (LibreOffice's n-gram language guesser; Debian's libexttextcat-data fingerprints, read once per
// thread from /usr/share/libexttextcat; a missing file throws, naming it) over all its languages. Its
// first language is the answer where it is allowed and CLD2's first reading did not name it or a
// language of its close set (there CLD2's closer look above stands: Portuguese stays unanswered).
// That mends CLD2's sure misreadings of plain sentences as far-off languages (Spanish verses read as
// Italian or Kinyarwanda).
//
// Confidence, for a language with CLD2 percent p among its three percents p1..p3 and normalized score s:
//   100 * share * fit * length * agreement, at most 100, where
//   share = p / (p1 + p2 + p3)          the part of the text in that language
//   fit = min(1, s / 512)               CLD2's normalized score: ordinary text scores about 400 to
//                                       2000 (Spanish lower than English), gibberish and guesses
//                                       mostly below 300
//   length = 0.2 + 0.8 * min(1, words / 5, letters / 25), at most 0.5 where CLD2 calls its reading
//            unreliable; words are runs of letters, and each character of a script written without
//            spaces (Han, kana, Thai, Lao, Khmer, Myanmar) is a word and counts as two letters
//   agreement = 1, or 0.5 where the answer is the second reading's and the first reading's best allowed
//            language was another or none.
// The second detector's answer is 100 * length * 0.5, its length at most 0.5 (unreliable): at most 25.
// So a single word is at most 36, two at most 52, three at most 68; a clean sentence of 5 words and 25
// letters or more, read in one language with an ordinary score, is 100; each language of a text half
// in one, half in another is about 50; the confidence does not fall as a clean sentence repeats.
std::vector<DetectedLanguage> detect_language(std::string_view text, const std::vector<std::string>& allowed);

// CLD2's own best guess over every language it knows ("" when it finds none, as for text without
// letters): what a reply names when the text is in none of the served languages. The first reading
// above, every language allowed, the most confident first; codes as above.
std::string detect_any_language(std::string_view text);

}  // namespace attn::document
