#pragma once
// Corpus and sentence chrF / chrF++ computed exactly as sacreBLEU 2.x's CHRF computes them,
// including its output line and reproducibility signature.
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eval/ngram_counts.h"
#include "eval/reference_sets.h"

namespace attn::eval {

struct ChrfOptions {
  int char_order = 6;       // character n-grams 1..char_order ("nc:6")
  int word_order = 0;       // word n-grams 1..word_order; 2 gives chrF++ ("nw:0")
  int beta = 2;             // recall weighs beta times as much as precision ("chrF2")
  bool lowercase = false;   // Python str.lower() first ("case:lc")
  bool whitespace = false;  // keep whitespace inside character n-grams ("space:yes")
  // false (sacreBLEU's default, "eff:yes"): average precision and recall over the orders that both
  // sides have, then take the F-score. true ("eff:no"): chrF++.py's epsilon smoothing, the mean of
  // per-order F-scores with empty orders counted as (nearly) zero.
  bool eps_smoothing = false;
};

// Options for chrF++ (word order 2).
ChrfOptions chrf_plus_plus_options();

// Hypothesis, reference and matching n-gram counts of one order.
struct ChrfOrderStatistics {
  long long hyp = 0;
  long long ref = 0;
  long long match = 0;
};

// Character orders 1..char_order, then word orders 1..word_order. They add up over segments.
using ChrfStatistics = std::vector<ChrfOrderStatistics>;

struct ChrfScore {
  double score = 0.0;  // 0..100
  int beta = 2;
  int word_order = 0;
  ChrfStatistics statistics;  // the corpus totals the score came from
  int nrefs = 1;              // references per segment, or kVariableReferenceCount
};

// sacreBLEU's CHRF._compute_f_score(): the score (0..100) from aggregated statistics.
double chrf_f_score(const ChrfStatistics& statistics, const ChrfOptions& options);

// The n-grams of one sentence: character orders, then word orders. They are views into the
// `storage` they were counted with.
using ChrfNgrams = std::vector<NgramCounts>;
ChrfNgrams count_chrf_ngrams(std::string_view sentence, const ChrfOptions& options, std::deque<std::string>& storage);
// The statistics of one hypothesis against the reference with the best sentence-level score (the
// first of equals), as sacreBLEU picks it.
ChrfStatistics chrf_segment_statistics(const ChrfNgrams& hypothesis, std::span<const ChrfNgrams> references,
                                       const ChrfOptions& options);

// Scores hypotheses against fixed references, preparing the references once.
class ChrfScorer {
 public:
  explicit ChrfScorer(const ReferenceSets& references, ChrfOptions options = {});
  ChrfScorer(ChrfScorer&&) = default;
  ChrfScorer& operator=(ChrfScorer&&) = default;
  ChrfScorer(const ChrfScorer&) = delete;  // n-gram views point into this scorer's own storage
  ChrfScorer& operator=(const ChrfScorer&) = delete;

  // Corpus chrF of one hypothesis per segment.
  ChrfScore score(std::span<const std::string> hypotheses) const;
  // The statistics of one segment.
  ChrfStatistics segment_statistics(std::size_t segment, std::string_view hypothesis) const;

  std::size_t segment_count() const { return segments_.size(); }
  int nrefs() const { return nrefs_; }
  const ChrfOptions& options() const { return options_; }

 private:
  ChrfOptions options_;
  std::deque<std::string> storage_;                // reference texts; a deque never moves its strings
  std::vector<std::vector<ChrfNgrams>> segments_;  // per segment, per reference
  int nrefs_ = 0;
};

// One-off corpus chrF; counts one segment's references at a time, so memory stays small.
ChrfScore corpus_chrf(std::span<const std::string> hypotheses, const ReferenceSets& references,
                      const ChrfOptions& options = {});
ChrfScore sentence_chrf(std::string_view hypothesis, std::span<const std::string> references,
                        const ChrfOptions& options = {});

// "chrF2", or "chrF2++" with word order 2.
std::string chrf_name(int beta, int word_order);
// "chrF2 = 59.73", as sacreBLEU's str(score).
std::string format_chrf(const ChrfScore& score, int width = 2);
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"
std::string chrf_signature(const ChrfOptions& options, int nrefs);

}  // namespace attn::eval
