#pragma once
// The sweep of `attn align --sweep`: the alignments of every cross-attention layer and head (and
// each layer's mean of heads) scored against a gold standard, to find the heads that align.
#include <string>
#include <vector>

#include "inspect/alignment_gold.h"
#include "inspect/alignment_table.h"
#include "inspect/attention_record.h"

namespace attn::inspect {

// For each layer of the first record (0, 1, ...): a row for each head, then one for the mean of
// the heads, each scored over all records; the row with the lowest AER of each layer is marked
// best (ties: the first, the lowest head). `threshold` as in AlignmentOptions. Errors name `origin`
// and a record's place there; no records, or records without cross-attention, are errors.
std::vector<SweepRow> sweep_layers_and_heads(const std::vector<AttentionRecord>& records, const std::string& origin,
                                             const Gold& gold, double threshold);

}  // namespace attn::inspect
