#pragma once
// Documents through the library: a text of paragraphs, an HTML page, Markdown, a .docx or an .odt
// translated sentence by sentence in its own format (Translator::translate_document), and the
// language of a text among some (detect_language). What `attn translate --format` and the
// service's /translate_file and /detect do (docs/cpp-api.md).
#include <string>
#include <vector>

namespace attn {

struct DocumentOptions {
  std::string format = "text";  // "text" (paragraphs), "html", "markdown", "docx", "odt"
  std::string source_language;  // the sentence rules ("en", "es"); "": the model's source language
};

struct DocumentTranslation {
  std::string data;  // the translated document, in the same format (the bytes of a package for docx/odt)
  std::vector<std::string> warnings;  // markup repaired, sentences cut or cropped
  int sentences = 0;                  // sentences the model translated
};

struct DetectedLanguage {
  std::string language;   // an ISO 639-1 code
  double confidence = 0;  // 0 to 100
};

// The languages among `languages` (ISO 639-1 codes) that `text` may be in, most likely first
// (CLD2, and libexttextcat where CLD2 finds none of them); empty when none is found. A text of one
// or two words gets a low confidence.
std::vector<DetectedLanguage> detect_language(const std::string& text, const std::vector<std::string>& languages);

}  // namespace attn
