#include "document/document_translation.h"

#include <algorithm>

#include "core/error.h"
#include "document/sentence_unit.h"
#include "document/placeholders.h"
#include "document/sentences.h"

namespace attn::document {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The range without whitespace at its ends (empty when it is all whitespace).
TextRange trimmed(const std::string& text, TextRange r) {
  while (r.begin < r.end && is_space(text[r.begin])) ++r.begin;
  while (r.end > r.begin && is_space(text[r.end - 1])) --r.end;
  return r;
}

// How a segment is cut: its units in order, and for every span whether it is inside one (placed by
// the alignment) or stays where it is around or between them (structural).
struct SegmentPlan {
  std::vector<TextRange> units;
  std::vector<bool> cut;                // per unit: a piece of a longer sentence
  std::vector<std::vector<int>> inner;  // per unit: its spans
  std::vector<int> unit_of;             // per span: its unit, -1: structural
};

// Does element `s` overlap the text of unit `u` (more than touching it)?
bool overlaps(const Span& s, TextRange u) { return s.begin < u.end && s.end > u.begin; }

// Units such that no element starts in one and ends in another: such units are joined.
std::vector<TextRange> join_across_elements(const Segment& seg, std::vector<TextRange> units) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const Span& s : seg.spans) {
      if (s.kind != Span::Kind::element) continue;
      std::size_t first = units.size(), last = 0;
      for (std::size_t k = 0; k < units.size(); ++k)
        if (overlaps(s, units[k])) first = std::min(first, k), last = k;
      if (first == last && first < units.size()) {
        // In one unit and partly outside it (its end in the spaces after the unit: "r <b>y <!>"):
        // the unit takes the element's outside part, which is no other unit's text.
        TextRange& u = units[first];
        const bool inside = s.begin >= u.begin && s.end <= u.end, around = s.begin <= u.begin && s.end >= u.end;
        if (inside || around) continue;
        u.begin = std::min(u.begin, s.begin);
        u.end = std::max(u.end, s.end);
        changed = true;
        break;
      }
      if (first >= last || last == units.size()) continue;
      // Around whole units: it stays around them. Cutting into the first or the last: one unit.
      if (s.begin <= units[first].begin && s.end >= units[last].end) continue;
      units[first].end = units[last].end;
      units.erase(units.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                  units.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      changed = true;
      break;
    }
  }
  return units;
}

SegmentPlan plan_segment(const Segment& seg, const DocumentOptions& o) {
  SegmentPlan plan;
  std::vector<TextRange> units;
  if (o.split_sentences) {
    units = split_sentences(seg.text, o.language);
  } else {
    const TextRange all = trimmed(seg.text, {0, seg.text.size()});
    if (all.begin < all.end) units.push_back(all);
  }
  // A placeholder is never cut: "see http://a.org/?x=1." is one sentence, not two at the "?".
  if (o.protect_placeholders)
    for (const Placeholder& p : find_placeholders(seg.text))
      for (std::size_t k = 0; k + 1 < units.size(); ++k)
        if (p.begin < units[k].end && p.end > units[k + 1].begin) {
          units[k].end = units[k + 1].end;
          units.erase(units.begin() + static_cast<std::ptrdiff_t>(k) + 1);
          --k;
        }
  units = join_across_elements(seg, units);
  // Too long for the model: in pieces, where no element is cut.
  for (const TextRange& u : units) {
    std::vector<TextRange> pieces{u};
    if (o.max_sentence_tokens > 0 && o.count_tokens &&
        o.count_tokens(std::string_view(seg.text).substr(u.begin, u.end - u.begin)) > o.max_sentence_tokens) {
      auto cut = split_long_sentence(seg.text, u, o.max_sentence_tokens, o.count_tokens);
      if (join_across_elements(seg, cut).size() == cut.size()) pieces = cut;
    }
    for (const TextRange& p : pieces) {
      plan.units.push_back(p);
      plan.cut.push_back(pieces.size() > 1);
    }
  }
  plan.inner.resize(plan.units.size());
  plan.unit_of.assign(seg.spans.size(), -1);
  for (std::size_t i = 0; i < seg.spans.size(); ++i) {
    const Span& s = seg.spans[i];
    const int parent_unit = s.parent >= 0 ? plan.unit_of[static_cast<std::size_t>(s.parent)] : -1;
    int unit = parent_unit;
    if (unit < 0)
      for (std::size_t k = 0; k < plan.units.size(); ++k) {
        const TextRange u = plan.units[k];
        const bool inside = s.kind == Span::Kind::element
                                ? s.begin >= u.begin && s.end <= u.end && !(s.begin <= u.begin && s.end >= u.end)
                                : s.begin > u.begin && s.begin < u.end;
        if (inside) unit = static_cast<int>(k);
      }
    plan.unit_of[i] = unit;
    if (unit >= 0) plan.inner[static_cast<std::size_t>(unit)].push_back(static_cast<int>(i));
  }
  return plan;
}

// The translated segment: the text between units as it was, each unit's translation in its place,
// structural spans moved with the text, each unit's spans under the innermost element around it.
Segment compose(const Segment& seg, const SegmentPlan& plan, const std::vector<Segment>& translated) {
  Segment out;
  out.outside_open = seg.outside_open;
  out.outside_close = seg.outside_close;
  const std::size_t n = plan.units.size();
  std::vector<std::size_t> new_begin(n);
  std::vector<long long> shift_after(n);  // added to offsets after unit k's end
  long long shift = 0;
  std::size_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    out.text += seg.text.substr(at, plan.units[k].begin - at);
    new_begin[k] = out.text.size();
    out.text += translated[k].text;
    shift += static_cast<long long>(translated[k].text.size()) -
             static_cast<long long>(plan.units[k].end - plan.units[k].begin);
    shift_after[k] = shift;
    at = plan.units[k].end;
  }
  out.text += seg.text.substr(at);
  // An offset outside every unit's inside: moved by the units before it (a unit's end with it).
  const auto map = [&](std::size_t p) {
    long long s = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (p == plan.units[k].begin) return new_begin[k];
      if (p >= plan.units[k].end) s = shift_after[k];
    }
    return static_cast<std::size_t>(static_cast<long long>(p) + s);
  };
  std::vector<int> index_of(seg.spans.size(), -1);
  std::size_t next_unit = 0;
  const auto add_unit = [&](std::size_t k) {
    // The innermost structural element around the unit.
    int container = -1;
    for (std::size_t i = 0; i < seg.spans.size(); ++i) {
      const Span& s = seg.spans[i];
      if (plan.unit_of[i] < 0 && s.kind == Span::Kind::element && s.begin <= plan.units[k].begin &&
          s.end >= plan.units[k].end && index_of[i] >= 0)
        container = index_of[i];
    }
    const int base = static_cast<int>(out.spans.size());
    for (Span s : translated[k].spans) {
      s.begin += new_begin[k], s.end += new_begin[k];
      s.parent = s.parent >= 0 ? s.parent + base : container;
      out.spans.push_back(s);
    }
  };
  for (std::size_t i = 0; i < seg.spans.size(); ++i) {
    if (plan.unit_of[i] >= 0) continue;
    const Span& s = seg.spans[i];
    while (next_unit < n && s.begin > plan.units[next_unit].begin) add_unit(next_unit++);
    Span moved = s;
    moved.begin = map(s.begin);
    moved.end = map(s.end);
    moved.parent = s.parent >= 0 ? index_of[static_cast<std::size_t>(s.parent)] : -1;
    index_of[i] = static_cast<int>(out.spans.size());
    out.spans.push_back(moved);
  }
  while (next_unit < n) add_unit(next_unit++);
  return out;
}

}  // namespace

DocumentTranslation translate_document(const Document& document, const SentenceTranslator& translate,
                                       const DocumentOptions& options) {
  DocumentTranslation result;
  result.warnings = document.warnings;
  struct Job {
    std::size_t segment, unit;
    SentenceUnit prepared;
  };
  std::vector<SegmentPlan> plans;
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < document.segments.size(); ++i) {
    const Segment& seg = document.segments[i];
    check_segment(seg, i);
    plans.push_back(plan_segment(seg, options));
    const SegmentPlan& plan = plans.back();
    for (std::size_t k = 0; k < plan.units.size(); ++k) {
      jobs.push_back({i, k, prepare_unit(seg, plan.units[k], plan.inner[k], options.protect_placeholders)});
      jobs.back().prepared.cut = plan.cut[k];
    }
  }
  // One batch; only units with markup to place need their alignment.
  std::vector<SentenceTranslation> translations(jobs.size());
  std::vector<std::string> batch;
  std::vector<bool> aligned;
  std::vector<std::size_t> where;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const SentenceUnit& u = jobs[j].prepared;
    if (u.model_text.empty()) continue;
    batch.push_back(u.model_text);
    aligned.push_back(!u.spans.empty());
    where.push_back(j);
  }
  if (!batch.empty()) {
    auto got = translate(batch, aligned);
    if (got.size() != batch.size())
      throw Error("document: the translator returned " + std::to_string(got.size()) + " translations for " +
                  std::to_string(batch.size()) + " sentences");
    for (std::size_t b = 0; b < batch.size(); ++b) translations[where[b]] = std::move(got[b]);
  }
  std::vector<std::vector<Segment>> translated(document.segments.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    const SentenceTranslation& t = translations[j];
    translated[job.segment].push_back(place_unit(job.prepared, t));
    if (!job.prepared.model_text.empty())
      result.sentences.push_back(
          {static_cast<int>(job.segment), job.prepared.model_text, t.text, t.links, job.prepared.cut});
    const std::string where =
        "segment " + std::to_string(job.segment + 1) + ", sentence " + std::to_string(job.unit + 1);
    if (t.cropped) {
      ++result.cropped_sentences;
      result.warnings.push_back(where + ": longer than the model takes; its end was not translated");
    }
    if (job.prepared.cut) ++result.cut_sentences;
  }
  if (result.cut_sentences > 0)
    result.warnings.push_back(std::to_string(result.cut_sentences) + " pieces of sentences longer than " +
                              std::to_string(options.max_sentence_tokens) +
                              " tokens (what the model translates whole) were translated one by one");
  for (std::size_t i = 0; i < document.segments.size(); ++i)
    result.rendered.push_back(render_segment(compose(document.segments[i], plans[i], translated[i]), document.escape));
  return result;
}

DocumentsTranslation translate_documents(const std::vector<Document>& documents, const SentenceTranslator& translate,
                                         const DocumentOptions& options) {
  Document all;
  all.escape = documents.empty() ? Escape::none : documents.front().escape;
  for (std::size_t d = 0; d < documents.size(); ++d) {
    if (documents[d].escape != all.escape) throw Error("document: documents of one call share one format");
    for (Segment s : documents[d].segments) all.segments.push_back(std::move(s));
    for (const std::string& w : documents[d].warnings)
      all.warnings.push_back(documents.size() > 1 ? "text " + std::to_string(d + 1) + ": " + w : w);
  }
  DocumentsTranslation out;
  out.details = translate_document(all, translate, options);
  std::size_t first = 0;
  for (const Document& d : documents) {
    const std::vector<std::string> mine(
        out.details.rendered.begin() + static_cast<std::ptrdiff_t>(first),
        out.details.rendered.begin() + static_cast<std::ptrdiff_t>(first + d.segments.size()));
    out.outputs.push_back(assemble(d, mine));
    first += d.segments.size();
  }
  return out;
}

}  // namespace attn::document
