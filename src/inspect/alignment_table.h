#pragma once
// The score tables of `attn align`: precision, recall and AER in percent, as text columns or as a
// JSON array (docs/alignment.md shows both).
#include <string>
#include <vector>

#include "inspect/alignment_score.h"

namespace attn::inspect {

// One scored alignment, named by where it came from (a file, or "ibm1 baseline").
struct NamedScore {
  std::string name;
  AlignmentScore score;
};

// Text: a header, then "precision  recall     AER  name" rows with two decimals. JSON: one object
// a row, {"alignment", "precision", "recall", "aer", "predicted", "sure", "predicted_in_sure",
// "predicted_in_possible"}. Both end with a newline.
std::string score_table(const std::vector<NamedScore>& rows, bool json);

// One layer and head of a sweep (head kMeanOfHeads: the mean of the layer's heads).
struct SweepRow {
  int layer = 0, head = 0;
  AlignmentScore score;
  bool best = false;  // the lowest AER of its layer
};

// Text: "layer  head  precision  recall     AER" rows, the best of each layer marked "*", and a
// last line saying what the mark means. JSON: {"layer", "head" (a number or "mean"), the scores,
// "best_in_layer"} a row.
std::string sweep_table(const std::vector<SweepRow>& rows, bool json);

}  // namespace attn::inspect
