#include "data/strongs_alignment.h"

#include <algorithm>
#include <map>

namespace attn::data {
namespace {

// For each number the gold uses, the words of one side that carry it (ascending, each once).
std::map<std::string, std::vector<std::size_t>> words_by_number(const std::vector<std::vector<std::string>>& words) {
  std::map<std::string, std::vector<std::size_t>> carriers;
  for (std::size_t i = 0; i < words.size(); ++i) {
    for (const std::string& number : words[i]) {
      if (is_untranslated_particle(number)) continue;
      std::vector<std::size_t>& list = carriers[number];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }
  return carriers;
}

std::string join(const std::vector<std::size_t>& indices) {
  std::string out;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (k > 0) out += ' ';
    out += std::to_string(indices[k]);
  }
  return out;
}

void sort_unique(std::vector<std::size_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
}

}  // namespace

std::size_t StrongsAlignment::sure_count() const {
  return static_cast<std::size_t>(std::count_if(links.begin(), links.end(), [](const WordLink& l) { return l.sure; }));
}

bool is_untranslated_particle(std::string_view strong_number) { return strong_number == "H853"; }

StrongsAlignment align_by_strong_numbers(const std::vector<std::vector<std::string>>& source_words,
                                         const std::vector<std::vector<std::string>>& target_words) {
  const auto source = words_by_number(source_words);
  const auto target = words_by_number(target_words);
  // (source, target) -> sure; a pair sharing several numbers is sure if any of them makes it sure.
  std::map<std::pair<std::size_t, std::size_t>, bool> pairs;
  StrongsAlignment alignment;
  for (const auto& [number, source_carriers] : source) {
    const auto found = target.find(number);
    if (found == target.end()) continue;
    const std::vector<std::size_t>& target_carriers = found->second;
    const bool one_to_one = source_carriers.size() == 1 && target_carriers.size() == 1;
    for (std::size_t i : source_carriers) {
      for (std::size_t j : target_carriers) pairs[{i, j}] |= one_to_one;
    }
    alignment.tagged_source.insert(alignment.tagged_source.end(), source_carriers.begin(), source_carriers.end());
    alignment.tagged_target.insert(alignment.tagged_target.end(), target_carriers.begin(), target_carriers.end());
  }
  for (const auto& [pair, sure] : pairs) alignment.links.push_back({pair.first, pair.second, sure});
  sort_unique(alignment.tagged_source);
  sort_unique(alignment.tagged_target);
  return alignment;
}

std::string gold_line(const StrongsAlignment& alignment) {
  std::string out;
  for (const WordLink& link : alignment.links) {
    if (!out.empty()) out += ' ';
    out += std::to_string(link.source) + (link.sure ? '-' : '?') + std::to_string(link.target);
  }
  return out;
}

std::string tagged_line(const StrongsAlignment& alignment) {
  return join(alignment.tagged_source) + " ||| " + join(alignment.tagged_target);
}

}  // namespace attn::data
