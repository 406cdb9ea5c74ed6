#pragma once
// Corpus BLEU and chrF, identical to sacreBLEU 2.x's (`attn bleu`; docs/metrics.md): the same
// scores to the last digit, the same signatures.
#include <string>
#include <vector>

#include "attn/error.h"

namespace attn {

struct MetricScore {
  double score = 0;       // 0-100
  std::string text;       // as sacreBLEU prints it: "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = ...)", "chrF2 = 57.32"
  std::string signature;  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0"
};

struct BleuMetricOptions {
  bool lowercase = false;        // sacreBLEU's -lc
  std::string tokenize = "13a";  // "13a" (sacreBLEU's default) or "none"
};

struct ChrfMetricOptions {
  int word_order = 0;      // 2: chrF++
  bool lowercase = false;  // sacreBLEU's -lc
};

// references[k][i] is the k-th reference of hypothesis i: one or more reference sets, each as long
// as the hypotheses (an empty string: no k-th reference for that segment). Throws Error when the
// lengths differ or a segment has no reference.
MetricScore bleu(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
                 const BleuMetricOptions& options = {});
MetricScore chrf(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references,
                 const ChrfMetricOptions& options = {});

}  // namespace attn
