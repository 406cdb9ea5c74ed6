#pragma once
// The language of a text, by CLD2 (Chrome's Compact Language Detector 2), among the languages a
// service translates from: LibreTranslate's /detect and source "auto".
#include <string>
#include <string_view>
#include <vector>

namespace attn::document {

struct DetectedLanguage {
  std::string language;   // ISO 639-1 ("en", "es"); CLD2's code where it has no two-letter one
  double confidence = 0;  // 0 to 100, as LibreTranslate reports it
  bool operator==(const DetectedLanguage&) const = default;
};

// The candidates among `allowed` (ISO 639-1 codes) for `text`, most likely first, each with a
// confidence: high for a long text CLD2 reads reliably in one language, low for a short or mixed one
// (a single word is never above 50). Empty when nothing in the text is detectable or none of the
// allowed languages is among CLD2's findings. Invalid UTF-8 is read as far as it is valid.
std::vector<DetectedLanguage> detect_language(std::string_view text, const std::vector<std::string>& allowed);

// CLD2's own best guess over every language it knows ("" when it finds none): what a reply names
// when the text is in none of the served languages.
std::string detect_any_language(std::string_view text);

}  // namespace attn::document
