#include "document/tag_placement.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace attn::document {
namespace {

// The target word at the same relative place as source word w (its middle): floor((w + 0.5) T / S).
int word_at_same_place(int w, int source_words, int target_words) {
  if (target_words <= 0) return -1;
  if (source_words <= 0) return 0;
  const int t = static_cast<int>(std::floor((w + 0.5) * target_words / source_words));
  return std::clamp(t, 0, target_words - 1);
}

// The target gap at the same relative place as source gap g.
int gap_at_same_place(int g, int source_words, int target_words) {
  if (source_words <= 0) return 0;
  return std::clamp(static_cast<int>(std::lround(static_cast<double>(g) * target_words / source_words)), 0,
                    target_words);
}

bool has_words(const TargetSpan& t) { return t.first <= t.last; }

std::vector<TargetSpan> place(const std::vector<SourceSpan>& spans, int source_words, int target_words,
                              const std::vector<std::pair<int, int>>* links) {
  std::vector<std::vector<int>> aligned(static_cast<std::size_t>(std::max(source_words, 0)));
  if (links)
    for (const auto& [s, t] : *links)
      if (s >= 0 && s < source_words && t >= 0 && t < target_words) aligned[static_cast<std::size_t>(s)].push_back(t);
  const auto linked = [&](int w) -> const std::vector<int>& { return aligned[static_cast<std::size_t>(w)]; };

  // First where each span would go on its own.
  std::vector<TargetSpan> out(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const SourceSpan& s = spans[i];
    if (s.parent >= static_cast<int>(i))
      throw Error("tag placement: span " + std::to_string(i) + "'s parent follows it");
    TargetSpan& t = out[i];
    if (s.element && s.first <= s.last) {
      if (s.first < 0 || s.last >= source_words)
        throw Error("tag placement: span " + std::to_string(i) + " wraps words outside the sentence");
      int lo = target_words, hi = -1;
      for (int w = s.first; w <= s.last; ++w)
        for (int x : linked(w)) lo = std::min(lo, x), hi = std::max(hi, x);
      if (hi < 0) {  // no link: the same relative place
        lo = word_at_same_place(s.first, source_words, target_words);
        hi = word_at_same_place(s.last, source_words, target_words);
      }
      t.first = lo, t.last = hi;
      t.gap = lo < 0 ? 0 : lo;
      if (target_words == 0) t.first = 0, t.last = -1, t.gap = 0;
      continue;
    }
    if (s.gap < 0 || s.gap > source_words)
      throw Error("tag placement: span " + std::to_string(i) + " sits outside the sentence");
    t.first = 0, t.last = -1;
    const bool before_linked = s.gap > 0 && !linked(s.gap - 1).empty();
    const bool after_linked = s.gap < source_words && !linked(s.gap).empty();
    const auto after_left = [&] {
      const auto& l = linked(s.gap - 1);
      return *std::max_element(l.begin(), l.end()) + 1;
    };
    const auto before_right = [&] {
      const auto& l = linked(s.gap);
      return *std::min_element(l.begin(), l.end());
    };
    if (s.lean_right ? after_linked : before_linked)
      t.gap = s.lean_right ? before_right() : after_left();
    else if (s.lean_right ? before_linked : after_linked)
      t.gap = s.lean_right ? after_left() : before_right();
    else
      t.gap = gap_at_same_place(s.gap, source_words, target_words);
  }

  // Then the tree: each span inside its parent, siblings' words apart. Siblings are settled in
  // source order; an earlier sibling keeps the words it took.
  std::vector<std::vector<std::pair<int, int>>> taken(spans.size() + 1);  // per parent (+1): word ranges
  for (std::size_t i = 0; i < spans.size(); ++i) {
    TargetSpan& t = out[i];
    const int parent = spans[i].parent;
    int lo_word = 0, hi_word = target_words - 1;
    if (parent >= 0) {
      const TargetSpan& p = out[static_cast<std::size_t>(parent)];
      if (!has_words(p)) {  // inside an element around no word: at its place
        t.first = 0, t.last = -1, t.gap = p.gap;
        continue;
      }
      lo_word = p.first, hi_word = p.last;
    }
    auto& siblings = taken[static_cast<std::size_t>(parent + 1)];
    if (has_words(t)) {
      int a = std::max(t.first, lo_word), b = std::min(t.last, hi_word);
      // The longest stretch of [a, b] no earlier sibling holds.
      int best_a = 0, best_b = -1;
      for (int x = a; x <= b;) {
        const auto hit = std::find_if(siblings.begin(), siblings.end(),
                                      [&](const auto& r) { return r.first <= x && x <= r.second; });
        if (hit != siblings.end()) {
          x = hit->second + 1;
          continue;
        }
        int y = x;
        while (y + 1 <= b && std::none_of(siblings.begin(), siblings.end(),
                                          [&](const auto& r) { return r.first <= y + 1 && y + 1 <= r.second; }))
          ++y;
        if (y - x > best_b - best_a) best_a = x, best_b = y;
        x = y + 1;
      }
      if (best_a <= best_b) {
        t.first = best_a, t.last = best_b;
        siblings.push_back({best_a, best_b});
        continue;
      }
      // Nothing left: an empty element where it would have begun, moved out of what holds that place.
      t.gap = std::clamp(a, lo_word, hi_word + 1);
      t.first = 0, t.last = -1;
    }
    t.gap = std::clamp(t.gap, lo_word, hi_word + 1);
    // A point must not fall between the words of a sibling element: to that element's nearer end.
    for (const auto& [a, b] : siblings)
      if (a < t.gap && t.gap <= b) t.gap = (t.gap - a <= b + 1 - t.gap) ? a : b + 1;
  }
  return out;
}

}  // namespace

std::vector<TargetSpan> place_spans(const std::vector<SourceSpan>& spans, int source_words, int target_words,
                                    const std::vector<std::pair<int, int>>& links) {
  return place(spans, source_words, target_words, &links);
}

std::vector<TargetSpan> place_by_position(const std::vector<SourceSpan>& spans, int source_words, int target_words) {
  return place(spans, source_words, target_words, nullptr);
}

}  // namespace attn::document
