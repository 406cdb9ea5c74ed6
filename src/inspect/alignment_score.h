#pragma once
// The alignment error rate (AER) of Och & Ney (2003): predicted links A against a gold standard
// with sure links S and possible links P (S ⊆ P).
#include <cstddef>
#include <vector>

#include "inspect/pharaoh.h"

namespace attn::inspect {

// Link counts summed over a corpus, and the scores of Och & Ney (2003):
//   precision = |A∩P| / |A|,  recall = |A∩S| / |S|,  AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|).
// With nothing to count, precision and recall are 1 and AER 0 (nothing was got wrong).
struct AlignmentScore {
  std::size_t predicted = 0, sure = 0, predicted_in_sure = 0, predicted_in_possible = 0;
  double precision() const;
  double recall() const;
  double aer() const;
};

// Scores one sentence's predicted links A (any "possible" links of a predicted file count as A).
// With `tagged`, links of A that touch a word without a gold tag are dropped first, because the
// gold cannot judge them. Counts are added to `score`.
void add_to_score(AlignmentScore& score, const Alignment& predicted, const GoldAlignment& gold,
                  const TaggedWords* tagged = nullptr);

// A whole corpus; the vectors must have equal lengths (tagged may be empty: no restriction).
AlignmentScore score_alignments(const std::vector<Alignment>& predicted, const std::vector<GoldAlignment>& gold,
                                const std::vector<TaggedWords>& tagged = {});

}  // namespace attn::inspect
