#include "eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "eval/python_str.h"
#include "eval/sacrebleu_format.h"
#include "eval/tokenizer_13a.h"

// Last: scores must come out bit for bit as sacreBLEU computes them.

namespace attn::eval {

namespace {

double default_smooth_value(BleuSmoothing smoothing) {
  switch (smoothing) {
    case BleuSmoothing::kFloor:
      return 0.1;
    case BleuSmoothing::kAddK:
      return 1.0;
    default:
      return 0.0;  // not used
  }
}

// sacreBLEU's my_log(): log, with log(0) floored to a huge negative number instead of -inf.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// The reference length closest to the hypothesis length; on a tie, the shorter one.
long long closest_reference_length(long long hyp_len, const std::vector<long long>& reference_lengths) {
  long long closest = -1;
  long long closest_diff = -1;
  for (long long length : reference_lengths) {
    const long long diff = std::llabs(hyp_len - length);
    if (closest_diff == -1 || diff < closest_diff || (diff == closest_diff && length < closest)) {
      closest_diff = diff;
      closest = length;
    }
  }
  return closest;
}

std::vector<NgramCounts> count_ngrams_by_order(std::span<const std::string_view> tokens, int max_order) {
  std::vector<NgramCounts> counts;
  counts.reserve(static_cast<std::size_t>(max_order));
  for (int n = 1; n <= max_order; ++n) counts.emplace_back(token_ngrams(tokens, static_cast<std::size_t>(n)));
  return counts;
}

std::string smoothing_name(BleuSmoothing smoothing) {
  switch (smoothing) {
    case BleuSmoothing::kNone:
      return "none";
    case BleuSmoothing::kFloor:
      return "floor";
    case BleuSmoothing::kAddK:
      return "add-k";
    case BleuSmoothing::kExp:
      return "exp";
  }
  return "?";
}

}  // namespace

BleuOptions sentence_bleu_options() {
  BleuOptions options;
  options.effective_order = true;
  return options;
}

BleuStatistics& BleuStatistics::operator+=(const BleuStatistics& other) {
  ATTN_CHECK(matches.size() == other.matches.size(), "adding BLEU statistics of different n-gram orders");
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  for (std::size_t n = 0; n < matches.size(); ++n) {
    matches[n] += other.matches[n];
    totals[n] += other.totals[n];
  }
  return *this;
}

BleuScore compute_bleu(const BleuStatistics& statistics, const BleuOptions& options) {
  const int max_order = options.max_ngram_order;
  ATTN_CHECK(max_order >= 1 && statistics.matches.size() == static_cast<std::size_t>(max_order),
             "BLEU statistics do not match max_ngram_order");
  const double smooth_value = options.smooth_value.value_or(default_smooth_value(options.smoothing));

  BleuScore result;
  result.counts = statistics.matches;
  result.totals = statistics.totals;
  result.hyp_len = statistics.hyp_len;
  result.ref_len = statistics.ref_len;
  result.ratio =
      statistics.ref_len != 0 ? static_cast<double>(statistics.hyp_len) / static_cast<double>(statistics.ref_len) : 0.0;
  if (statistics.hyp_len < statistics.ref_len) {
    result.bp = statistics.hyp_len > 0
                    ? std::exp(1.0 - static_cast<double>(statistics.ref_len) / static_cast<double>(statistics.hyp_len))
                    : 0.0;
  } else {
    result.bp = 1.0;
  }
  result.precisions.assign(static_cast<std::size_t>(max_order), 0.0);

  // No match at all: 0, without smoothing (sacreBLEU #141).
  if (std::all_of(statistics.matches.begin(), statistics.matches.end(), [](long long m) { return m == 0; })) {
    return result;
  }

  double smooth_mteval = 1.0;
  int effective_order = max_order;
  for (int n = 1; n <= max_order; ++n) {
    double correct = static_cast<double>(statistics.matches[static_cast<std::size_t>(n - 1)]);
    double total = static_cast<double>(statistics.totals[static_cast<std::size_t>(n - 1)]);
    if (options.smoothing == BleuSmoothing::kAddK && n > 1) {
      correct += smooth_value;
      total += smooth_value;
    }
    if (total == 0.0) break;
    if (options.effective_order) effective_order = n;
    double& precision = result.precisions[static_cast<std::size_t>(n - 1)];
    if (correct == 0.0) {
      if (options.smoothing == BleuSmoothing::kExp) {
        smooth_mteval *= 2.0;
        precision = 100.0 / (smooth_mteval * total);
      } else if (options.smoothing == BleuSmoothing::kFloor) {
        precision = 100.0 * smooth_value / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }

  double log_sum = 0.0;
  for (int n = 0; n < effective_order; ++n) log_sum += floored_log(result.precisions[static_cast<std::size_t>(n)]);
  result.score = result.bp * std::exp(log_sum / effective_order);
  return result;
}

std::string bleu_tokenize(std::string_view segment, const BleuOptions& options) {
  std::string lowered;
  if (options.lowercase) {
    lowered = python_lower(segment);
    segment = lowered;
  }
  segment = rstrip_python_whitespace(segment);
  return options.tokenizer == BleuTokenizer::k13a ? tokenize_13a(segment) : join_python_split(segment);
}

BleuSegmentReferences prepare_bleu_references(std::span<const std::string_view> references, const BleuOptions& options,
                                              std::deque<std::string>& storage) {
  BleuSegmentReferences prepared;
  for (std::string_view reference : references) {
    const std::string& tokenized = storage.emplace_back(bleu_tokenize(reference, options));
    const std::vector<std::string_view> tokens = split_joined_tokens(tokenized);
    prepared.lengths.push_back(static_cast<long long>(tokens.size()));
    std::vector<NgramCounts> counts = count_ngrams_by_order(tokens, options.max_ngram_order);
    if (prepared.max_counts.empty()) {
      prepared.max_counts = std::move(counts);
    } else {
      for (std::size_t n = 0; n < counts.size(); ++n) prepared.max_counts[n].keep_max(counts[n]);
    }
  }
  return prepared;
}

BleuStatistics bleu_segment_statistics(std::string_view hypothesis, const BleuSegmentReferences& references,
                                       const BleuOptions& options) {
  ATTN_CHECK(!references.lengths.empty(), "a segment needs at least one reference");
  const std::string tokenized = bleu_tokenize(hypothesis, options);
  const std::vector<std::string_view> tokens = split_joined_tokens(tokenized);
  BleuStatistics statistics(options.max_ngram_order);
  statistics.hyp_len = static_cast<long long>(tokens.size());
  statistics.ref_len = closest_reference_length(statistics.hyp_len, references.lengths);
  const std::vector<NgramCounts> counts = count_ngrams_by_order(tokens, options.max_ngram_order);
  for (std::size_t n = 0; n < counts.size(); ++n) {
    statistics.totals[n] = counts[n].total();
    statistics.matches[n] = counts[n].matches(references.max_counts[n]);
  }
  return statistics;
}

BleuScorer::BleuScorer(const ReferenceSets& references, BleuOptions options) : options_(options) {
  ATTN_CHECK(options_.max_ngram_order >= 1, "max_ngram_order must be at least 1");
  const SegmentReferences grouped = group_references_by_segment(references);
  nrefs_ = grouped.nrefs;
  segments_.reserve(grouped.segments.size());
  for (const auto& segment : grouped.segments)
    segments_.push_back(prepare_bleu_references(segment, options_, storage_));
}

BleuStatistics BleuScorer::segment_statistics(std::size_t segment, std::string_view hypothesis) const {
  ATTN_CHECK(segment < segments_.size(), "segment index out of range");
  return bleu_segment_statistics(hypothesis, segments_[segment], options_);
}

BleuScore BleuScorer::score(std::span<const std::string> hypotheses) const {
  check_hypothesis_count(hypotheses.size(), segments_.size());
  BleuStatistics corpus(options_.max_ngram_order);
  for (std::size_t i = 0; i < hypotheses.size(); ++i) corpus += segment_statistics(i, hypotheses[i]);
  BleuScore result = compute_bleu(corpus, options_);
  result.nrefs = nrefs_;
  return result;
}

BleuScore corpus_bleu(std::span<const std::string> hypotheses, const ReferenceSets& references,
                      const BleuOptions& options) {
  ATTN_CHECK(options.max_ngram_order >= 1, "max_ngram_order must be at least 1");
  const SegmentReferences grouped = group_references_by_segment(references);
  check_hypothesis_count(hypotheses.size(), grouped.segments.size());
  BleuStatistics corpus(options.max_ngram_order);
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    std::deque<std::string> storage;
    corpus +=
        bleu_segment_statistics(hypotheses[i], prepare_bleu_references(grouped.segments[i], options, storage), options);
  }
  BleuScore result = compute_bleu(corpus, options);
  result.nrefs = grouped.nrefs;
  return result;
}

BleuScore sentence_bleu(std::string_view hypothesis, std::span<const std::string> references,
                        const BleuOptions& options) {
  const std::string hypotheses[] = {std::string(hypothesis)};
  return corpus_bleu(hypotheses, one_segment_reference_sets(references), options);
}

std::string bleu_verbose_score(const BleuScore& score) {
  std::string text;
  for (std::size_t n = 0; n < score.precisions.size(); ++n) {
    if (n > 0) text += '/';
    text += format_fixed(score.precisions[n], 1);
  }
  text += " (BP = " + format_fixed(score.bp, 3) + " ratio = " + format_fixed(score.ratio, 3) +
          " hyp_len = " + std::to_string(score.hyp_len) + " ref_len = " + std::to_string(score.ref_len) + ")";
  return text;
}

std::string format_bleu(const BleuScore& score, int width) {
  return "BLEU = " + format_fixed(score.score, width) + " " + bleu_verbose_score(score);
}

std::string bleu_signature(const BleuOptions& options, int nrefs) {
  std::string smooth = smoothing_name(options.smoothing);
  if (options.smoothing == BleuSmoothing::kFloor || options.smoothing == BleuSmoothing::kAddK) {
    smooth += '[';
    smooth += format_fixed(options.smooth_value.value_or(default_smooth_value(options.smoothing)), 2);
    smooth += ']';
  }
  return format_signature(nrefs, {{"case", options.lowercase ? "lc" : "mixed"},
                                  {"eff", options.effective_order ? "yes" : "no"},
                                  {"tok", options.tokenizer == BleuTokenizer::k13a ? "13a" : "none"},
                                  {"smooth", smooth}});
}

}  // namespace attn::eval
