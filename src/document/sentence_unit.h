#pragma once
// One unit a model translates (a sentence, sentences an element runs across, or a piece of a
// sentence too long for the model) taken out of its segment: the text the model sees, and the spans
// and removed pieces in word terms; then, given its translation and word alignment, the translated
// unit as a segment of its own, its spans placed (tag_placement.h).
#include <string>
#include <vector>

#include "document/document.h"
#include "document/document_translation.h"
#include "document/sentences.h"
#include "document/tag_placement.h"

namespace attn::document {

// A span of the unit: one of the segment's spans, or a piece taken out of the text (a placeholder,
// a run of whitespace with a line break or a tab).
struct UnitSpan {
  Span::Kind kind = Span::Kind::element;
  std::string open, close;                                   // markup, or the removed text
  int source_span = -1;                                      // the segment's span it is, -1: a removed piece
  bool space_before = false, space_after = false;            // whitespace beside it in the source
  bool replaces_space = false;                               // a run of whitespace: it stands where a space would
  bool before_punctuation = false;                           // directly followed by punctuation ("{name},")
  bool glued_after = false;                                  // directly followed by a word ("{count}items")
  bool lead_punctuation = false, trail_punctuation = false;  // an element's text starts / ends with it
};

struct SentenceUnit {
  TextRange range;         // in the segment's text
  std::string model_text;  // words joined by single spaces
  std::vector<UnitSpan> spans;
  std::vector<SourceSpan> placement;  // the same spans in word terms, a tree in document order
  bool cut = false;                   // a piece of a longer sentence
};

// The unit over `range` of `segment`, with `inner` (indices of the segment's spans that lie inside
// the unit, in document order) and, where asked, its placeholders taken out of the text.
SentenceUnit prepare_unit(const Segment& segment, TextRange range, const std::vector<int>& inner,
                          bool protect_placeholders);

// The unit's translation as a segment: the translated text with the unit's spans placed on its
// words and the removed pieces put back. Its spans' parents are its own (-1: the unit's top).
Segment place_unit(const SentenceUnit& unit, const SentenceTranslation& translation);

}  // namespace attn::document
