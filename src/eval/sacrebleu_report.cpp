#include "eval/sacrebleu_report.h"

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/sacrebleu_format.h"
#include "eval/sacrebleu_json.h"

namespace attn::eval {

std::string SacrebleuReport::text() const {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  for (const std::string& line : signatures) out += line + "\n";
  return out;
}

SacrebleuReport sacrebleu_report(std::span<const std::string> hypotheses, const ReferenceSets& references,
                                 const SacrebleuReportOptions& o) {
  SacrebleuReport report;
  if (o.bleu) {
    BleuOptions options;
    options.lowercase = o.lowercase;
    const BleuScore score = corpus_bleu(hypotheses, references, options);
    report.lines.push_back(format_bleu(score, o.width));
    report.signatures.push_back("BLEU signature: " + bleu_signature(options, score.nrefs));
    report.json.push_back(bleu_json(score, options, o.width));
  }
  if (o.chrf) {
    ChrfOptions options;
    options.lowercase = o.lowercase;
    options.word_order = o.chrf_word_order;
    const ChrfScore score = corpus_chrf(hypotheses, references, options);
    report.lines.push_back(format_chrf(score, o.width));
    report.signatures.push_back(chrf_name(score.beta, score.word_order) +
                                " signature: " + chrf_signature(options, score.nrefs));
    report.json.push_back(chrf_json(score, options, o.width));
  }
  return report;
}

}  // namespace attn::eval
