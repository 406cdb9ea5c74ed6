#pragma once
// Corpus and sentence BLEU computed exactly as sacreBLEU 2.x (see kSacrebleuVersion) computes them,
// including its output line and reproducibility signature.
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eval/ngram_counts.h"
#include "eval/reference_sets.h"

namespace attn::eval {

enum class BleuTokenizer {
  k13a,  // mteval-v13a, sacreBLEU's default ("tok:13a")
  kNone  // split on whitespace only, for text that is already tokenized ("tok:none")
};

enum class BleuSmoothing {
  kNone,   // no smoothing: a zero precision gives BLEU 0
  kFloor,  // a zero match count counts as smooth_value (default 0.1)
  kAddK,   // add smooth_value (default 1) to matches and totals of orders 2 and up
  kExp     // mteval-v13a: the k-th zero precision becomes 1 / (2^k * total); sacreBLEU's default
};

struct BleuOptions {
  bool lowercase = false;  // Python str.lower() before tokenizing ("case:lc")
  BleuTokenizer tokenizer = BleuTokenizer::k13a;
  BleuSmoothing smoothing = BleuSmoothing::kExp;
  std::optional<double> smooth_value;  // unset: sacreBLEU's default for the method
  int max_ngram_order = 4;
  // Average only over the orders before the first one with no hypothesis n-gram at all ("eff:yes")
  // instead of scoring 0. sacreBLEU uses it for sentence BLEU, not for corpus BLEU.
  bool effective_order = false;
};

// sacreBLEU's sentence_bleu() defaults: as corpus BLEU but with effective order.
BleuOptions sentence_bleu_options();

// The sufficient statistics of BLEU; they add up over segments.
struct BleuStatistics {
  long long hyp_len = 0;
  long long ref_len = 0;           // sum of the closest reference lengths
  std::vector<long long> matches;  // clipped n-gram matches, per order 1..max_ngram_order
  std::vector<long long> totals;   // hypothesis n-grams, per order

  explicit BleuStatistics(int max_ngram_order = 4)
      : matches(static_cast<std::size_t>(max_ngram_order)), totals(static_cast<std::size_t>(max_ngram_order)) {}
  BleuStatistics& operator+=(const BleuStatistics& other);
};

struct BleuScore {
  double score = 0.0;              // 0..100
  std::vector<long long> counts;   // matches per order (sacreBLEU's add-k adds k here; this does not)
  std::vector<long long> totals;   // hypothesis n-grams per order
  std::vector<double> precisions;  // percent, smoothed as the score used them
  double bp = 0.0;                 // brevity penalty
  double ratio = 0.0;              // hyp_len / ref_len (0 if ref_len is 0)
  long long hyp_len = 0;
  long long ref_len = 0;
  int nrefs = 1;  // references per segment, or kVariableReferenceCount
};

// sacreBLEU's BLEU.compute_bleu(): the score from aggregated statistics.
BleuScore compute_bleu(const BleuStatistics& statistics, const BleuOptions& options);

// Tokenizes one segment as BLEU does (optional lowercasing, rstrip, tokenizer) and returns the
// tokens joined by single spaces.
std::string bleu_tokenize(std::string_view segment, const BleuOptions& options);

// The references of one segment, tokenized and counted once; the n-grams are views into the
// `storage` they were prepared with.
struct BleuSegmentReferences {
  std::vector<long long> lengths;       // tokens of each reference
  std::vector<NgramCounts> max_counts;  // per order, each n-gram's largest count in any reference
};
BleuSegmentReferences prepare_bleu_references(std::span<const std::string_view> references, const BleuOptions& options,
                                              std::deque<std::string>& storage);
// The statistics of one hypothesis against its segment's references.
BleuStatistics bleu_segment_statistics(std::string_view hypothesis, const BleuSegmentReferences& references,
                                       const BleuOptions& options);

// Scores hypotheses against fixed references, preparing the references once, as sacreBLEU's
// BLEU(references=...) does; the trainer's validation can keep one and score every checkpoint.
class BleuScorer {
 public:
  explicit BleuScorer(const ReferenceSets& references, BleuOptions options = {});
  BleuScorer(BleuScorer&&) = default;
  BleuScorer& operator=(BleuScorer&&) = default;
  BleuScorer(const BleuScorer&) = delete;  // n-gram views point into this scorer's own storage
  BleuScorer& operator=(const BleuScorer&) = delete;

  // Corpus BLEU of one hypothesis per segment.
  BleuScore score(std::span<const std::string> hypotheses) const;
  // The statistics of one segment.
  BleuStatistics segment_statistics(std::size_t segment, std::string_view hypothesis) const;

  std::size_t segment_count() const { return segments_.size(); }
  int nrefs() const { return nrefs_; }
  const BleuOptions& options() const { return options_; }

 private:
  BleuOptions options_;
  std::deque<std::string> storage_;  // tokenized references; a deque never moves its strings
  std::vector<BleuSegmentReferences> segments_;
  int nrefs_ = 0;
};

// One-off corpus BLEU; prepares one segment's references at a time, so memory stays small.
BleuScore corpus_bleu(std::span<const std::string> hypotheses, const ReferenceSets& references,
                      const BleuOptions& options = {});
BleuScore sentence_bleu(std::string_view hypothesis, std::span<const std::string> references,
                        const BleuOptions& options = sentence_bleu_options());

// "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)", as
// sacreBLEU's str(score); `width` is the score's decimals (sacreBLEU's API: 2, its command line: 1).
std::string format_bleu(const BleuScore& score, int width = 2);
// The part after the score: "82.4/50.0/45.5/37.5 (BP = ... ref_len = 18)" (JSON "verbose_score").
std::string bleu_verbose_score(const BleuScore& score);
// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"
std::string bleu_signature(const BleuOptions& options, int nrefs);

}  // namespace attn::eval
