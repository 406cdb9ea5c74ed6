#include "document/sentence_unit.h"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "core/error.h"
#include "core/utf8.h"
#include "document/placeholders.h"

namespace attn::document {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Punctuation that sits at a word's edge: a tag or a placeholder goes inside or outside it as the
// source had it.
bool is_edge_punctuation(char32_t c) {
  static const std::u32string marks = U".,;:!?\"'()[]{}«»“”‘’¿¡…—–-";
  return marks.find(c) != std::u32string::npos;
}

char32_t code_point_at(std::string_view text, std::size_t at) { return decode_utf8_at(text, at).code_point; }

// The code point that ends at `end` (its first byte's offset in *start).
char32_t code_point_before(std::string_view text, std::size_t end, std::size_t* start) {
  std::size_t b = end;
  do --b;
  while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80);
  *start = b;
  return code_point_at(text, b);
}

struct Word {
  std::size_t begin = 0, end = 0;  // in the unit's text
};

// A target word cut into leading punctuation, core and trailing punctuation (bytes of the word).
struct WordParts {
  std::string lead, core, trail;
};

WordParts parts_of(std::string_view word) {
  std::size_t a = 0, b = word.size();
  while (a < b) {
    const auto cp = decode_utf8_at(word, a);
    if (!is_edge_punctuation(cp.code_point)) break;
    a += cp.length;
  }
  while (b > a) {
    std::size_t start = 0;
    if (!is_edge_punctuation(code_point_before(word, b, &start))) break;
    b = start;
  }
  if (a == b) return {"", std::string(word), ""};  // punctuation alone: all core
  return {std::string(word.substr(0, a)), std::string(word.substr(a, b - a)), std::string(word.substr(b))};
}

}  // namespace

SentenceUnit prepare_unit(const Segment& segment, TextRange range, const std::vector<int>& inner,
                          bool protect_placeholders) {
  SentenceUnit u;
  u.range = range;
  const std::string_view text = std::string_view(segment.text).substr(range.begin, range.end - range.begin);
  const auto local = [&](std::size_t at) { return at - range.begin; };

  // Pieces taken out of the text: placeholders that no span boundary cuts, runs of whitespace that
  // hold a line break or a tab.
  struct Removed {
    std::size_t begin, end;
    bool whitespace;
  };
  std::vector<Removed> removed;
  const auto cut_by_a_span = [&](std::size_t b, std::size_t e) {
    for (int i : inner) {
      const Span& s = segment.spans[static_cast<std::size_t>(i)];
      for (std::size_t at : {s.begin, s.end})
        if (local(at) > b && local(at) < e) return true;
    }
    return false;
  };
  if (protect_placeholders)
    for (const Placeholder& p : find_placeholders(text))
      if (!cut_by_a_span(p.begin, p.end)) removed.push_back({p.begin, p.end, false});
  for (std::size_t i = 0; i < text.size();) {
    if (!is_space(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    bool breaks = false;
    while (j < text.size() && is_space(text[j])) breaks |= text[j] != ' ', ++j;
    const bool inside_placeholder = std::any_of(
        removed.begin(), removed.end(), [&](const Removed& r) { return !r.whitespace && r.begin <= i && j <= r.end; });
    if (breaks && !inside_placeholder && !cut_by_a_span(i, j)) removed.push_back({i, j, true});
    i = j;
  }
  std::sort(removed.begin(), removed.end(), [](const Removed& a, const Removed& b) { return a.begin < b.begin; });

  // The words: runs of text between whitespace (a removed run of whitespace is whitespace), each
  // without the placeholders inside it; one that was only a placeholder is no word. A placeholder
  // glued to a word stays inside that word's range ("Hello{name}," is the word "Hello,"), so the
  // punctuation after it stays with the word before it.
  const auto removed_at = [&](std::size_t at) -> const Removed* {
    for (const Removed& r : removed)
      if (r.begin <= at && at < r.end) return &r;
    return nullptr;
  };
  // An empty element that breaks words (<br>, a .docx tab) ends a word where it stands.
  std::vector<std::size_t> breaks;
  for (int i : inner) {
    const Span& sp = segment.spans[static_cast<std::size_t>(i)];
    if (sp.kind == Span::Kind::empty_element && sp.breaks_words) breaks.push_back(local(sp.begin));
  }
  const auto breaks_at = [&](std::size_t at) { return std::find(breaks.begin(), breaks.end(), at) != breaks.end(); };
  std::vector<Word> words;
  std::vector<std::string> word_text;
  for (std::size_t i = 0; i < text.size();) {
    const Removed* r = removed_at(i);
    if (is_space(text[i]) || (r && r->whitespace)) {
      i = r && r->whitespace ? r->end : i + 1;
      continue;
    }
    std::size_t j = i;
    std::string kept;
    while (j < text.size() && !is_space(text[j]) && !(j > i && breaks_at(j))) {
      if (const Removed* q = removed_at(j)) {
        if (q->whitespace) break;
        j = q->end;
        continue;
      }
      kept += text[j++];
    }
    // "Hello {name}, welcome": the comma left behind goes with "Hello", not alone.
    const bool after_placeholder = removed_at(i) != nullptr;
    if (!kept.empty() && after_placeholder && !words.empty() && is_edge_punctuation(code_point_at(kept, 0))) {
      words.back().end = j;
      word_text.back() += kept;
    } else if (!kept.empty()) {
      words.push_back({i, j});
      word_text.push_back(kept);
    }
    i = j;
  }
  for (std::size_t k = 0; k < words.size(); ++k) {
    if (k) u.model_text += ' ';
    u.model_text += word_text[k];
  }
  // Does [b, e) hold any of word k's own text (not a placeholder inside it)?
  const auto covers = [&](const Word& w, std::size_t b, std::size_t e) {
    for (std::size_t x = std::max(b, w.begin); x < std::min(e, w.end); ++x)
      if (!removed_at(x)) return true;
    return false;
  };
  const auto gap_at = [&](std::size_t at) {  // words that start before `at`
    int g = 0;
    for (const Word& w : words) g += w.begin < at;
    return g;
  };
  const auto space_at = [&](std::size_t at) { return at < text.size() && is_space(text[at]); };
  const auto space_before = [&](std::size_t at) { return at > 0 && is_space(text[at - 1]); };
  const auto punctuation_at = [&](std::size_t at) {
    return at < text.size() && is_edge_punctuation(code_point_at(text, at));
  };

  // Every span of the unit with its range in the unit's text, in document order: the segment's
  // inner spans, and each removed piece after the spans that start where it does.
  struct Entry {
    std::size_t begin, end;
    int segment_span;  // -1: removed[piece]
    int piece;
  };
  std::vector<Entry> entries;
  for (int i : inner) {
    const Span& s = segment.spans[static_cast<std::size_t>(i)];
    entries.push_back({local(s.begin), local(s.end), i, -1});
  }
  for (std::size_t p = 0; p < removed.size(); ++p)
    entries.push_back({removed[p].begin, removed[p].end, -1, static_cast<int>(p)});
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    return a.segment_span >= 0 && b.segment_span < 0;  // segment spans first at one place
  });

  std::vector<int> position_of(segment.spans.size(), -1);  // segment span -> unit span
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const Entry& en = entries[e];
    UnitSpan us;
    SourceSpan sp;
    // The parent: the segment's own, where it is in the unit; a removed piece's, the innermost unit
    // element around it.
    int parent = -1;
    if (en.segment_span >= 0) {
      const Span& s = segment.spans[static_cast<std::size_t>(en.segment_span)];
      us.kind = s.kind, us.open = s.open, us.close = s.close, us.source_span = en.segment_span;
      if (s.parent >= 0) parent = position_of[static_cast<std::size_t>(s.parent)];
      position_of[static_cast<std::size_t>(en.segment_span)] = static_cast<int>(e);
    } else {
      const Removed& r = removed[static_cast<std::size_t>(en.piece)];
      us.kind = Span::Kind::text;
      us.open = std::string(text.substr(r.begin, r.end - r.begin));
      us.replaces_space = r.whitespace;
      for (std::size_t q = 0; q < e; ++q) {
        const Entry& o = entries[q];
        if (o.segment_span >= 0 && u.spans[q].kind == Span::Kind::element && o.begin <= r.begin && r.end <= o.end)
          parent = static_cast<int>(q);  // later ones are inner
      }
    }
    us.space_before = space_before(en.begin);
    us.space_after = space_at(en.end);
    us.before_punctuation = punctuation_at(en.end);
    us.glued_after = en.end < text.size() && !space_at(en.end) && !us.before_punctuation;
    sp.parent = parent;
    // In word terms.
    int first = -1, last = -1;
    if (us.kind == Span::Kind::element)
      for (std::size_t k = 0; k < words.size(); ++k)
        if (covers(words[k], en.begin, en.end)) {
          if (first < 0) first = static_cast<int>(k);
          last = static_cast<int>(k);
        }
    if (first >= 0) {
      sp.element = true, sp.first = first, sp.last = last;
      us.lead_punctuation = punctuation_at(std::max(en.begin, words[static_cast<std::size_t>(first)].begin));
      std::size_t start = 0;
      const std::size_t stop = std::min(en.end, words[static_cast<std::size_t>(last)].end);
      us.trail_punctuation = stop > 0 && is_edge_punctuation(code_point_before(text, stop, &start));
    } else {
      sp.gap = gap_at(en.begin);
      // Glued to the word after it, not to the one before: it goes with the word after.
      sp.lean_right = (en.begin == 0 || space_before(en.begin)) && en.end < text.size() && !space_at(en.end) &&
                      !punctuation_at(en.end);
      if (sp.gap == 0) sp.lean_right = true;
    }
    u.spans.push_back(us);
    u.placement.push_back(sp);
  }
  return u;
}

namespace {

// Writes the translated unit: target words with single spaces, the spans opened and closed around
// their words, points at their gaps.
class UnitWriter {
 public:
  UnitWriter(const SentenceUnit& unit, const std::vector<TargetSpan>& placed, std::vector<WordParts> words)
      : unit_(unit), placed_(placed), words_(std::move(words)), children_(unit.spans.size() + 1) {
    for (std::size_t i = 0; i < unit.spans.size(); ++i)
      children_[static_cast<std::size_t>(unit.placement[i].parent + 1)].push_back(static_cast<int>(i));
    // Siblings in target order: a point in gap g before word g; an element by its first word.
    for (auto& list : children_)
      std::stable_sort(list.begin(), list.end(), [&](int a, int b) { return key(a) < key(b); });
  }

  Segment write() {
    range(-1, 0, static_cast<int>(words_.size()) - 1, -1, false, false);
    return std::move(out_);
  }

 private:
  // Position of a span among its siblings: 2 g for a point in gap g, 2 w + 1 for an element from word w.
  int key(int i) const {
    const TargetSpan& t = placed_[static_cast<std::size_t>(i)];
    return t.first <= t.last ? 2 * t.first + 1 : 2 * t.gap;
  }
  bool has_words(int i) const {
    return placed_[static_cast<std::size_t>(i)].first <= placed_[static_cast<std::size_t>(i)].last;
  }

  void space() {
    if (need_space_) out_.text += ' ';
    need_space_ = false;
  }

  // Words [a, b] of `parent`'s children list; skip_lead / skip_trail: the first / last word's
  // punctuation is written outside by the caller.
  void range(int parent, int a, int b, int out_parent, bool skip_lead, bool skip_trail) {
    const auto& kids = children_[static_cast<std::size_t>(parent + 1)];
    int at = a;
    for (int c : kids) {
      if (done_[c]) continue;
      const TargetSpan& t = placed_[static_cast<std::size_t>(c)];
      if (has_words(c)) {
        write_words(parent, at, t.first - 1, out_parent, skip_lead && at == a, false);
        element(c, out_parent, skip_lead && t.first == a, skip_trail && t.last == b);
        at = t.last + 1;
      } else {
        write_words(parent, at, t.gap - 1, out_parent, skip_lead && at == a, false);
        at = std::max(at, t.gap);
        if (!done_[c]) point(c, out_parent);  // unless it went in before a word's punctuation
      }
    }
    write_words(parent, at, b, out_parent, skip_lead && at == a, skip_trail);
  }

  void element(int c, int out_parent, bool outer_skip_lead, bool outer_skip_trail) {
    const UnitSpan& us = unit_.spans[static_cast<std::size_t>(c)];
    const TargetSpan& t = placed_[static_cast<std::size_t>(c)];
    done_[c] = true;
    // Edge punctuation the source kept outside the element stays outside in the target.
    const bool lead_out = !us.lead_punctuation && !outer_skip_lead;
    const bool trail_out = !us.trail_punctuation && !outer_skip_trail;
    space();
    if (lead_out) out_.text += words_[static_cast<std::size_t>(t.first)].lead;
    const int index = open(us, out_parent);
    range(c, t.first, t.last, index, lead_out || outer_skip_lead, trail_out || outer_skip_trail);
    out_.spans[static_cast<std::size_t>(index)].end = out_.text.size();
    if (trail_out) out_.text += words_[static_cast<std::size_t>(t.last)].trail;
  }

  int open(const UnitSpan& us, int out_parent) {
    Span s;
    s.kind = us.kind;
    s.open = us.open, s.close = us.close;
    s.begin = s.end = out_.text.size();
    s.parent = out_parent;
    out_.spans.push_back(s);
    return static_cast<int>(out_.spans.size()) - 1;
  }

  void point(int c, int out_parent) {
    const UnitSpan& us = unit_.spans[static_cast<std::size_t>(c)];
    const SourceSpan& sp = unit_.placement[static_cast<std::size_t>(c)];
    done_[c] = true;
    if (us.replaces_space) {  // a line break or a tab: where the space was, never first
      if (!out_.text.empty()) out_.text += us.open;
      need_space_ = false;
      return;
    }
    if (sp.lean_right)
      space();  // it goes with the word after it
    else if (us.space_before && !out_.text.empty())
      out_.text += ' ';
    need_space_ = false;
    if (us.kind == Span::Kind::text) {
      out_.text += us.open;
    } else {
      const int index = open(us, out_parent);
      if (us.kind == Span::Kind::element) {  // around no word: its children are all here
        for (int k : children_[static_cast<std::size_t>(c) + 1]) point(k, index);
        out_.spans[static_cast<std::size_t>(index)].end = out_.text.size();
      }
    }
    need_space_ = !us.glued_after;
  }

  void write_words(int parent, int a, int b, int out_parent, bool skip_lead, bool skip_trail) {
    for (int w = a; w <= b; ++w) {
      const WordParts& p = words_[static_cast<std::size_t>(w)];
      space();
      if (!(skip_lead && w == a)) out_.text += p.lead;
      out_.text += p.core;
      // Points that leaned on this word and stood before punctuation in the source go before its.
      for (int c : children_[static_cast<std::size_t>(parent + 1)]) {
        const TargetSpan& t = placed_[static_cast<std::size_t>(c)];
        const UnitSpan& us = unit_.spans[static_cast<std::size_t>(c)];
        if (!done_[c] && !has_words(c) && t.gap == w + 1 && us.before_punctuation && !us.replaces_space &&
            !unit_.placement[static_cast<std::size_t>(c)].lean_right && !p.trail.empty() &&
            us.kind != Span::Kind::element) {
          need_space_ = false;
          point(c, out_parent);
          need_space_ = false;
        }
      }
      if (!(skip_trail && w == b)) out_.text += p.trail;
      need_space_ = true;
    }
  }

  const SentenceUnit& unit_;
  const std::vector<TargetSpan>& placed_;
  std::vector<WordParts> words_;
  std::vector<std::vector<int>> children_;
  std::vector<bool> done_ = std::vector<bool>(unit_.spans.size(), false);
  Segment out_;
  bool need_space_ = false;
};

}  // namespace

Segment place_unit(const SentenceUnit& unit, const SentenceTranslation& translation) {
  std::vector<WordParts> words;
  const std::string& t = translation.text;
  for (std::size_t i = 0; i < t.size();) {
    if (is_space(t[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < t.size() && !is_space(t[j])) ++j;
    words.push_back(parts_of(std::string_view(t).substr(i, j - i)));
    i = j;
  }
  const int source_words = unit.model_text.empty()
                               ? 0
                               : 1 + static_cast<int>(std::count(unit.model_text.begin(), unit.model_text.end(), ' '));
  const auto placed = place_spans(unit.placement, source_words, static_cast<int>(words.size()), translation.links);
  return UnitWriter(unit, placed, std::move(words)).write();
}

}  // namespace attn::document
