#include "eval/reference_sets.h"

#include <set>

#include "core/error.h"

namespace attn::eval {

SegmentReferences group_references_by_segment(const ReferenceSets& sets) {
  if (sets.empty()) throw Error("no reference sets given");
  const std::size_t segments = sets.front().size();
  for (std::size_t k = 1; k < sets.size(); ++k) {
    if (sets[k].size() != segments) {
      throw Error("reference set " + std::to_string(k + 1) + " has " + std::to_string(sets[k].size()) +
                  " segments but reference set 1 has " + std::to_string(segments));
    }
  }
  SegmentReferences grouped;
  grouped.segments.resize(segments);
  std::set<std::size_t> counts;
  for (std::size_t i = 0; i < segments; ++i) {
    for (const auto& set : sets) {
      if (!set[i].empty()) grouped.segments[i].push_back(set[i]);
    }
    if (grouped.segments[i].empty()) {
      throw Error("segment " + std::to_string(i + 1) + ": every reference is empty");
    }
    counts.insert(grouped.segments[i].size());
  }
  grouped.nrefs = counts.size() == 1 ? static_cast<int>(*counts.begin())
                  : counts.empty()   ? static_cast<int>(sets.size())
                                     : kVariableReferenceCount;
  return grouped;
}

ReferenceSets one_segment_reference_sets(std::span<const std::string> references) {
  ReferenceSets sets;
  for (const std::string& reference : references) sets.push_back({reference});
  return sets;
}

void check_hypothesis_count(std::size_t hypotheses, std::size_t segments) {
  if (hypotheses != segments) {
    throw Error(std::to_string(hypotheses) + " hypotheses for " + std::to_string(segments) +
                " reference segments; there must be one hypothesis per segment");
  }
}

}  // namespace attn::eval
