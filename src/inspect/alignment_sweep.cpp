#include "inspect/alignment_sweep.h"

#include "core/error.h"
#include "inspect/word_alignment.h"

namespace attn::inspect {

std::vector<SweepRow> sweep_layers_and_heads(const std::vector<AttentionRecord>& records, const std::string& origin,
                                             const Gold& gold, double threshold) {
  if (records.empty()) throw_in(origin, "no records to sweep");
  const int layers = cross_layer_count(records.front());
  if (layers == 0) throw_at(origin, 1, "the record has no cross-attention");
  std::vector<SweepRow> rows;
  for (int layer = 0; layer < layers; ++layer) {
    const std::size_t first = rows.size();
    const int heads = cross_head_count(records.front(), layer);
    for (int head = 0; head <= heads; ++head) {
      AlignmentOptions options;
      options.layer = layer;
      options.head = head == heads ? kMeanOfHeads : head;
      options.threshold = threshold;
      rows.push_back({layer, options.head, score_against_gold(gold, align_records(records, origin, options), origin)});
    }
    std::size_t best = first;
    for (std::size_t r = first; r < rows.size(); ++r) {
      if (rows[r].score.aer() < rows[best].score.aer()) best = r;  // ties: the first (lowest head)
    }
    rows[best].best = true;
  }
  return rows;
}

}  // namespace attn::inspect
