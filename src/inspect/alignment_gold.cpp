#include "inspect/alignment_gold.h"

#include <utility>

#include "core/error.h"

namespace attn::inspect {

void check_same_lines(const std::string& a, std::size_t a_lines, const std::string& b, std::size_t b_lines) {
  if (a_lines != b_lines) {
    throw Error(a + " has " + std::to_string(a_lines) + " lines but " + b + " has " + std::to_string(b_lines) +
                "; they must have one line per sentence");
  }
}

Gold read_gold(const std::string& path, const std::string& tagged_path) {
  Gold gold;
  gold.path = path;
  gold.links = read_pharaoh_file(path);
  if (!tagged_path.empty()) {
    gold.tagged = read_tagged_file(tagged_path);
    check_same_lines(path, gold.links.size(), tagged_path, gold.tagged.size());
  }
  return gold;
}

AlignmentScore score_against_gold(const Gold& gold, const std::vector<Alignment>& predicted,
                                  const std::string& predicted_name) {
  check_same_lines(gold.path, gold.links.size(), predicted_name, predicted.size());
  return score_alignments(predicted, gold.links, gold.tagged);
}

std::vector<Alignment> read_predicted_alignments(const std::string& path) {
  std::vector<Alignment> predicted;
  for (GoldAlignment& links : read_pharaoh_file(path)) predicted.push_back(std::move(links.possible));
  return predicted;
}

}  // namespace attn::inspect
