#include "inspect/alignment_score.h"

#include <algorithm>

#include "core/error.h"

namespace attn::inspect {

namespace {

bool contains(const std::vector<int>& sorted, int value) {
  return std::binary_search(sorted.begin(), sorted.end(), value);
}

bool contains(const Alignment& sorted, const Link& link) {
  return std::binary_search(sorted.begin(), sorted.end(), link);
}

}  // namespace

double AlignmentScore::precision() const {
  return predicted == 0 ? 1.0 : static_cast<double>(predicted_in_possible) / static_cast<double>(predicted);
}

double AlignmentScore::recall() const {
  return sure == 0 ? 1.0 : static_cast<double>(predicted_in_sure) / static_cast<double>(sure);
}

double AlignmentScore::aer() const {
  const std::size_t total = predicted + sure;
  if (total == 0) return 0.0;
  return 1.0 - static_cast<double>(predicted_in_sure + predicted_in_possible) / static_cast<double>(total);
}

void add_to_score(AlignmentScore& score, const Alignment& predicted, const GoldAlignment& gold,
                  const TaggedWords* tagged) {
  Alignment links = predicted;
  normalize(links);
  if (tagged) {
    std::erase_if(links, [&](const Link& link) {
      return !contains(tagged->source, link.source) || !contains(tagged->target, link.target);
    });
  }
  // P ⊇ S by definition; a gold line's sure links are counted as possible too even if a caller
  // built a GoldAlignment without them.
  Alignment possible = gold.possible;
  possible.insert(possible.end(), gold.sure.begin(), gold.sure.end());
  normalize(possible);
  Alignment sure = gold.sure;
  normalize(sure);

  score.predicted += links.size();
  score.sure += sure.size();
  for (const Link& link : links) {
    score.predicted_in_sure += contains(sure, link) ? 1 : 0;
    score.predicted_in_possible += contains(possible, link) ? 1 : 0;
  }
}

AlignmentScore score_alignments(const std::vector<Alignment>& predicted, const std::vector<GoldAlignment>& gold,
                                const std::vector<TaggedWords>& tagged) {
  ATTN_CHECK(predicted.size() == gold.size(), "score_alignments: as many predicted as gold sentences");
  ATTN_CHECK(tagged.empty() || tagged.size() == gold.size(), "score_alignments: a tagged line per gold sentence");
  AlignmentScore score;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    add_to_score(score, predicted[i], gold[i], tagged.empty() ? nullptr : &tagged[i]);
  }
  return score;
}

}  // namespace attn::inspect
