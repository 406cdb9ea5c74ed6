#pragma once
// Where inline markup goes in a translation: each element that wrapped source words wraps the
// target words aligned to them, each point (a <br>, a placeholder, a line break) goes next to the
// target word aligned to the source word beside it, and the result is a well-formed tree with every
// span exactly once. Words are split at spaces, as the word alignment's (inspect/word_alignment.h).
//
// The alignment (attn's cross-attention, read as word links) decides; where it says nothing about a
// span's words, the span keeps its relative place in the sentence. Marian's browser translator
// places tags the same way from its alignments; LibreTranslate has no alignment to do it with.
#include <utility>
#include <vector>

namespace attn::document {

// A source span in word terms. An element wraps source words [first, last]; a point sits in the
// gap before source word `gap` (0: before the first word, n: after the last). An element around no
// word (<b></b>, or around a removed placeholder) is a point.
struct SourceSpan {
  bool element = false;
  int first = 0, last = -1;  // element: the words it wraps (first <= last)
  int gap = 0;               // point: 0..source words
  // A point is placed after the target word aligned to the source word before it (leaning left),
  // or before the one aligned to the word after it (leaning right): whichever it was glued to in the
  // source, left by default.
  bool lean_right = false;
  int parent = -1;  // an enclosing element among the spans (an index), -1: none
};

// Where it goes in the target: an element wraps target words [first, last] (first > last: it ended
// up around no word, an empty element at gap `first`); a point sits in target gap `gap`.
struct TargetSpan {
  int first = 0, last = -1;
  int gap = 0;
};

// Places `spans` (a tree in document order: a parent before its children) in a target of
// `target_words` words, given `links` (source word, target word). Each element wraps the hull of
// the target words linked to its words, clamped into its parent's; siblings that would overlap are
// cut apart (the earlier keeps its words) so that the tree stays well-formed; an element none of
// whose words is linked, and a point whose neighbour word is not linked, take the target position at
// the same relative place in the sentence (the baseline, place_by_position). Points inside an element
// stay inside it.
std::vector<TargetSpan> place_spans(const std::vector<SourceSpan>& spans, int source_words, int target_words,
                                    const std::vector<std::pair<int, int>>& links);

// The baseline that uses no alignment: every word mapped to the word at the same relative place in
// the target, then clamped and cut apart as place_spans does.
std::vector<TargetSpan> place_by_position(const std::vector<SourceSpan>& spans, int source_words, int target_words);

}  // namespace attn::document
