#pragma once
// References for corpus scoring, laid out as sacreBLEU takes them: one or more reference sets,
// each holding one reference per segment.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::eval {

// sets[k][i] is the k-th reference of segment i. Every set covers every segment.
using ReferenceSets = std::vector<std::vector<std::string>>;

// The signature's nrefs when segments have different numbers of references ("nrefs:var").
inline constexpr int kVariableReferenceCount = -1;

struct SegmentReferences {
  // Per segment, its non-empty references, in set order (views into the ReferenceSets).
  std::vector<std::vector<std::string_view>> segments;
  // References per segment, or kVariableReferenceCount.
  int nrefs = 0;
};

// Groups references by segment the way sacreBLEU's _cache_references() does: an empty string
// stands for "no reference here" and is dropped, so a segment may have fewer references than there
// are sets. Throws attn::Error if there are no sets, if the sets differ in length, or if every
// reference of some segment is empty (sacreBLEU refuses such a segment too).
SegmentReferences group_references_by_segment(const ReferenceSets& sets);

// The reference sets of a one-segment corpus, for sentence-level scores.
ReferenceSets one_segment_reference_sets(std::span<const std::string> references);

// Throws attn::Error unless there is one hypothesis per segment.
void check_hypothesis_count(std::size_t hypotheses, std::size_t segments);

}  // namespace attn::eval
