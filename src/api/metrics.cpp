// The public bleu() and chrf() (include/attn/metrics.h) over the eval floor: `attn bleu`'s scores
// and texts (sacreBLEU's Python API: two decimals).
#include "attn/metrics.h"

#include "api/argument_errors.h"
#include "eval/bleu.h"
#include "eval/chrf.h"

namespace attn {

using api::as_argument_error;

MetricScore bleu(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
                 const BleuMetricOptions& options) {
  eval::BleuOptions o;
  o.lowercase = options.lowercase;
  if (options.tokenize == "13a")
    o.tokenizer = eval::BleuTokenizer::k13a;
  else if (options.tokenize == "none")
    o.tokenizer = eval::BleuTokenizer::kNone;
  else
    api::invalid("tokenize: unknown tokenizer '" + options.tokenize + "' (known: 13a, none)");
  const eval::BleuScore score = as_argument_error([&] { return eval::corpus_bleu(hypotheses, references, o); });
  return {score.score, eval::format_bleu(score), eval::bleu_signature(o, score.nrefs)};
}

MetricScore chrf(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
                 const ChrfMetricOptions& options) {
  if (options.word_order < 0) api::invalid("word_order must be >= 0 (2: chrF++)");
  eval::ChrfOptions o;
  o.lowercase = options.lowercase;
  o.word_order = options.word_order;
  const eval::ChrfScore score = as_argument_error([&] { return eval::corpus_chrf(hypotheses, references, o); });
  return {score.score, eval::format_chrf(score), eval::chrf_signature(o, score.nrefs)};
}

}  // namespace attn
