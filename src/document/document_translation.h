#pragma once
// A document translated: each segment cut into sentences (the unit a model is trained on), the
// sentences of the whole document translated as one batch, the inline markup placed on the
// translated words by the word alignment, and each segment written back in its format with the
// layout between its sentences as it was.
//
// Inside a sentence, what the model must not see is taken out and put back beside the translated
// words: placeholders (%1$s, {name}, URLs, e-mail addresses), line breaks and tabs (a sentence
// wrapped over lines), and the format's inline markup. An element that encloses whole sentences
// stays around their translations; one that starts in one sentence and ends in another makes them
// one unit. A sentence longer than the model takes is cut at a clause boundary (or a space) and
// translated in pieces, and the result says so.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "document/document.h"

namespace attn::document {

struct SentenceTranslation {
  std::string text;
  std::vector<std::pair<int, int>> links;  // (source word, target word), words split at spaces
  bool cropped = false;                    // the model cut the input (it was over its limit)
};

// Translates sentences (one batch), one result per sentence in order; alignment[i]: fill sentence
// i's links (needed only where there is markup to place).
using SentenceTranslator = std::function<std::vector<SentenceTranslation>(const std::vector<std::string>& sentences,
                                                                          const std::vector<bool>& alignment)>;

struct DocumentOptions {
  std::string language;         // the source language, for the sentence rules ("en", "es"; "": ICU's root)
  bool split_sentences = true;  // false: each segment is one sentence (one line, one verse)
  bool protect_placeholders = true;
  // Sentences with more tokens than this are cut (0: never); count_tokens gives a text's tokens as
  // the model sees them.
  int max_sentence_tokens = 0;
  std::function<int(std::string_view)> count_tokens;
};

// One sentence as the model saw it and translated it (for the page: each sentence's attention).
struct TranslatedSentence {
  int segment = 0;
  std::string source, target;
  std::vector<std::pair<int, int>> links;
  bool cut = false;  // a piece of a sentence too long for the model
};

struct DocumentTranslation {
  std::vector<std::string> rendered;          // each segment's translation in the format (assemble)
  std::vector<TranslatedSentence> sentences;  // in document order
  std::vector<std::string> warnings;          // the reader's repairs, sentences cut or cropped
  int cut_sentences = 0, cropped_sentences = 0;
};

// Translates every segment of `document` (one call of `translate`). Throws Error for a segment
// whose spans are not a well-formed tree (check_segment).
DocumentTranslation translate_document(const Document& document, const SentenceTranslator& translate,
                                       const DocumentOptions& options);

// Several documents in one call of `translate` (their sentences share batches): each written back
// whole, in order. Warnings name the document (from 1) when there are several.
struct DocumentsTranslation {
  std::vector<std::string> outputs;
  DocumentTranslation details;  // rendered: every document's segments, in order
};
DocumentsTranslation translate_documents(const std::vector<Document>& documents, const SentenceTranslator& translate,
                                         const DocumentOptions& options);

}  // namespace attn::document
