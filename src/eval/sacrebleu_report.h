#pragma once
// What `attn bleu` prints: each asked-for metric's score line, then their signatures, as sacreBLEU
// prints them; or sacreBLEU's JSON (sacrebleu_json.h).
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/reference_sets.h"

namespace attn::eval {

struct SacrebleuReportOptions {
  bool bleu = true, chrf = true;  // the metrics, in this order
  bool lowercase = false;         // case-insensitive scores (Python's str.lower())
  int width = 2;                  // decimals of the printed scores
  int chrf_word_order = 0;        // 2: chrF++
};

struct SacrebleuReport {
  std::vector<std::string> lines;       // one score line per metric
  std::vector<std::string> signatures;  // "BLEU signature: ..." per metric
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  // The lines, then the signatures, each ending with a newline.
  std::string text() const;
};

SacrebleuReport sacrebleu_report(std::span<const std::string> hypotheses, const ReferenceSets& references,
                                 const SacrebleuReportOptions& options);

}  // namespace attn::eval
