#pragma once
// A gold standard read for scoring (its links and, if given, the words it tags), and the check
// that files meant to hold one line per sentence do.
#include <cstddef>
#include <string>
#include <vector>

#include "inspect/alignment_score.h"
#include "inspect/pharaoh.h"

namespace attn::inspect {

// Throws Error("A has N lines but B has M; they must have one line per sentence") unless the
// counts are equal. `a` and `b` name the files (or whatever holds the lines).
void check_same_lines(const std::string& a, std::size_t a_lines, const std::string& b, std::size_t b_lines);

struct Gold {
  std::string path;  // named in errors
  std::vector<GoldAlignment> links;
  std::vector<TaggedWords> tagged;  // empty: every word is judged
};

// Reads the gold links and, unless tagged_path is "", its tagged words (one line per gold line).
Gold read_gold(const std::string& path, const std::string& tagged_path);

// The scores of one alignment per gold line; `predicted_name` names the alignments when the line
// counts differ.
AlignmentScore score_against_gold(const Gold& gold, const std::vector<Alignment>& predicted,
                                  const std::string& predicted_name);

// The alignments of a Pharaoh file to score: every link of a line, "i-j" or "i?j", is a predicted link.
std::vector<Alignment> read_predicted_alignments(const std::string& path);

}  // namespace attn::inspect
