#include "eval/chrf.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"
#include "eval/python_str.h"
#include "eval/sacrebleu_format.h"

// Last: scores must come out bit for bit as sacreBLEU computes them.

namespace attn::eval {

namespace {

// Python's string.punctuation.
bool is_ascii_punctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

bool is_single_code_point(std::string_view word) { return decode_utf8_at(word, 0).length == word.size(); }

// sacreBLEU's CHRF._remove_punctuation(), the words of chrF++: a word longer than one character
// loses a punctuation mark at its end, or else at its start, as a word of its own.
std::string words_for_chrf(std::string_view sentence) {
  std::string joined;
  const auto add = [&joined](std::string_view word) {
    if (!joined.empty()) joined += ' ';
    joined += word;
  };
  for (std::string_view word : split_python_whitespace(sentence)) {
    if (is_single_code_point(word)) {
      add(word);
    } else if (is_ascii_punctuation(word.back())) {
      add(word.substr(0, word.size() - 1));
      add(word.substr(word.size() - 1));
    } else if (is_ascii_punctuation(word.front())) {
      add(word.substr(0, 1));
      add(word.substr(1));
    } else {
      add(word);
    }
  }
  return joined;
}

// sacreBLEU's CHRF._get_match_statistics(); an order the reference is too short for counts no
// hypothesis n-grams either.
ChrfOrderStatistics match_statistics(const NgramCounts& hyp, const NgramCounts& ref) {
  return {ref.empty() ? 0 : hyp.total(), ref.total(), hyp.matches(ref)};
}

void check_orders(const ChrfOptions& options) {
  ATTN_CHECK(options.char_order >= 0 && options.word_order >= 0 && options.char_order + options.word_order > 0,
             "chrF needs at least one n-gram order");
}

void add_statistics(ChrfStatistics& total, const ChrfStatistics& segment) {
  for (std::size_t n = 0; n < segment.size(); ++n) {
    total[n].hyp += segment[n].hyp;
    total[n].ref += segment[n].ref;
    total[n].match += segment[n].match;
  }
}

}  // namespace

ChrfOptions chrf_plus_plus_options() {
  ChrfOptions options;
  options.word_order = 2;
  return options;
}

double chrf_f_score(const ChrfStatistics& statistics, const ChrfOptions& options) {
  const std::size_t order = static_cast<std::size_t>(options.char_order + options.word_order);
  ATTN_CHECK(statistics.size() == order, "chrF statistics do not match the n-gram orders");
  constexpr double eps = 1e-16;
  const double factor = static_cast<double>(options.beta) * static_cast<double>(options.beta);
  double score = 0.0;
  double avg_prec = 0.0;
  double avg_rec = 0.0;
  int effective_order = 0;
  for (const ChrfOrderStatistics& s : statistics) {
    const double prec = s.hyp > 0 ? static_cast<double>(s.match) / static_cast<double>(s.hyp) : eps;
    const double rec = s.ref > 0 ? static_cast<double>(s.match) / static_cast<double>(s.ref) : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (s.hyp > 0 && s.ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * score / static_cast<double>(order);
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec == 0.0) return 0.0;
  score = (1 + factor) * avg_prec * avg_rec;
  score /= (factor * avg_prec) + avg_rec;
  return 100 * score;
}

namespace {

ChrfScore make_score(ChrfStatistics statistics, const ChrfOptions& options, int nrefs) {
  ChrfScore score;
  score.score = chrf_f_score(statistics, options);
  score.beta = options.beta;
  score.word_order = options.word_order;
  score.statistics = std::move(statistics);
  score.nrefs = nrefs;
  return score;
}

}  // namespace

ChrfNgrams count_chrf_ngrams(std::string_view sentence, const ChrfOptions& options, std::deque<std::string>& storage) {
  std::string lowered;
  if (options.lowercase) {
    lowered = python_lower(sentence);
    sentence = lowered;
  }
  ChrfNgrams counts;
  counts.reserve(static_cast<std::size_t>(options.char_order + options.word_order));
  const std::string& characters =
      storage.emplace_back(options.whitespace ? std::string(sentence) : remove_python_whitespace(sentence));
  const std::vector<std::size_t> boundaries = code_point_boundaries(characters);
  for (int n = 1; n <= options.char_order; ++n) {
    counts.emplace_back(character_ngrams(characters, boundaries, static_cast<std::size_t>(n)));
  }
  if (options.word_order > 0) {
    const std::string& words = storage.emplace_back(words_for_chrf(sentence));
    const std::vector<std::string_view> tokens = split_joined_tokens(words);
    for (int n = 1; n <= options.word_order; ++n)
      counts.emplace_back(token_ngrams(tokens, static_cast<std::size_t>(n)));
  }
  return counts;
}

ChrfStatistics chrf_segment_statistics(const ChrfNgrams& hypothesis, std::span<const ChrfNgrams> references,
                                       const ChrfOptions& options) {
  ChrfStatistics best;
  double best_f_score = -1.0;
  for (const ChrfNgrams& reference : references) {
    ChrfStatistics statistics;
    statistics.reserve(hypothesis.size());
    for (std::size_t n = 0; n < hypothesis.size(); ++n) {
      statistics.push_back(match_statistics(hypothesis[n], reference[n]));
    }
    const double f_score = chrf_f_score(statistics, options);
    if (f_score > best_f_score) {
      best_f_score = f_score;
      best = std::move(statistics);
    }
  }
  return best;
}

ChrfScorer::ChrfScorer(const ReferenceSets& references, ChrfOptions options) : options_(options) {
  check_orders(options_);
  const SegmentReferences grouped = group_references_by_segment(references);
  nrefs_ = grouped.nrefs;
  segments_.reserve(grouped.segments.size());
  for (const auto& segment_references : grouped.segments) {
    std::vector<ChrfNgrams>& segment = segments_.emplace_back();
    for (std::string_view reference : segment_references) {
      segment.push_back(count_chrf_ngrams(reference, options_, storage_));
    }
  }
}

ChrfStatistics ChrfScorer::segment_statistics(std::size_t segment, std::string_view hypothesis) const {
  ATTN_CHECK(segment < segments_.size(), "segment index out of range");
  std::deque<std::string> storage;
  return chrf_segment_statistics(count_chrf_ngrams(hypothesis, options_, storage), segments_[segment], options_);
}

ChrfScore ChrfScorer::score(std::span<const std::string> hypotheses) const {
  check_hypothesis_count(hypotheses.size(), segments_.size());
  ChrfStatistics corpus(static_cast<std::size_t>(options_.char_order + options_.word_order));
  for (std::size_t i = 0; i < hypotheses.size(); ++i) add_statistics(corpus, segment_statistics(i, hypotheses[i]));
  return make_score(std::move(corpus), options_, nrefs_);
}

ChrfScore corpus_chrf(std::span<const std::string> hypotheses, const ReferenceSets& references,
                      const ChrfOptions& options) {
  check_orders(options);
  const SegmentReferences grouped = group_references_by_segment(references);
  check_hypothesis_count(hypotheses.size(), grouped.segments.size());
  ChrfStatistics corpus(static_cast<std::size_t>(options.char_order + options.word_order));
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    std::deque<std::string> storage;
    std::vector<ChrfNgrams> segment;
    for (std::string_view reference : grouped.segments[i])
      segment.push_back(count_chrf_ngrams(reference, options, storage));
    add_statistics(corpus,
                   chrf_segment_statistics(count_chrf_ngrams(hypotheses[i], options, storage), segment, options));
  }
  return make_score(std::move(corpus), options, grouped.nrefs);
}

ChrfScore sentence_chrf(std::string_view hypothesis, std::span<const std::string> references,
                        const ChrfOptions& options) {
  const std::string hypotheses[] = {std::string(hypothesis)};
  return corpus_chrf(hypotheses, one_segment_reference_sets(references), options);
}

std::string chrf_name(int beta, int word_order) {
  return "chrF" + std::to_string(beta) + std::string(static_cast<std::size_t>(std::max(word_order, 0)), '+');
}

std::string format_chrf(const ChrfScore& score, int width) {
  return chrf_name(score.beta, score.word_order) + " = " + format_fixed(score.score, width);
}

std::string chrf_signature(const ChrfOptions& options, int nrefs) {
  return format_signature(nrefs, {{"case", options.lowercase ? "lc" : "mixed"},
                                  {"eff", options.eps_smoothing ? "no" : "yes"},
                                  {"nc", std::to_string(options.char_order)},
                                  {"nw", std::to_string(options.word_order)},
                                  {"space", options.whitespace ? "yes" : "no"}});
}

}  // namespace attn::eval
