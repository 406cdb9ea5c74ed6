#include "inspect/alignment_run.h"

#include "inspect/alignment_baseline.h"
#include "inspect/alignment_gold.h"
#include "inspect/alignment_sweep.h"
#include "inspect/alignment_table.h"
#include "inspect/word_alignment.h"

namespace attn::inspect {

namespace {

std::string pharaoh_lines(const std::vector<Alignment>& alignments) {
  std::string text;
  for (const Alignment& alignment : alignments) text += format_pharaoh(alignment) + "\n";
  return text;
}

}  // namespace

std::string align_attention_records(const AlignmentRequest& request, const std::vector<AttentionRecord>& records,
                                    const std::string& origin) {
  if (request.sweep) {
    const Gold gold = read_gold(request.gold, request.gold_tagged);
    return sweep_table(sweep_layers_and_heads(records, origin, gold, request.threshold), request.json);
  }
  AlignmentOptions options;
  options.layer = request.layer;
  options.head = parse_alignment_head(request.head);
  options.threshold = request.threshold;
  const std::vector<Alignment> alignments = align_records(records, origin, options);
  if (request.gold.empty()) return pharaoh_lines(alignments);
  const Gold gold = read_gold(request.gold, request.gold_tagged);
  return score_table({{origin, score_against_gold(gold, alignments, origin)}}, request.json);
}

std::string align_by_baseline(const AlignmentRequest& request) {
  const std::vector<Alignment> alignments = baseline_alignments(request);
  if (request.gold.empty()) return pharaoh_lines(alignments);
  const Gold gold = read_gold(request.gold, request.gold_tagged);
  return score_table({{request.baseline + " baseline", score_against_gold(gold, alignments, request.source)}},
                     request.json);
}

std::string score_alignment_files(const AlignmentRequest& request) {
  const Gold gold = read_gold(request.gold, request.gold_tagged);
  std::vector<NamedScore> rows;
  for (const std::string& path : request.alignments) {
    rows.push_back({path, score_against_gold(gold, read_predicted_alignments(path), path)});
  }
  return score_table(rows, request.json);
}

}  // namespace attn::inspect
