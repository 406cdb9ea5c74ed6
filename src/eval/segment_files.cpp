#include "eval/segment_files.h"

#include <algorithm>

#include "core/error.h"
#include "core/text_file.h"
#include "eval/python_str.h"

namespace attn::eval {

std::vector<std::string> read_segments(const std::string& path) {
  std::vector<std::string> lines = read_text_lines(path);
  for (std::string& line : lines) line.resize(rstrip_python_whitespace(line).size());
  return lines;
}

ReferenceSets read_reference_files(const std::vector<std::string>& reference_paths, const std::string& hypothesis_path,
                                   std::size_t hypothesis_count) {
  if (reference_paths.empty()) throw Error("scoring " + hypothesis_path + " needs at least one reference file");
  ReferenceSets sets;
  for (const std::string& path : reference_paths) {
    sets.push_back(read_segments(path));
    if (sets.back().size() != hypothesis_count) {
      throw Error(path + " has " + std::to_string(sets.back().size()) + " lines but " + hypothesis_path + " has " +
                  std::to_string(hypothesis_count) + "; they must have one line per segment");
    }
  }
  for (std::size_t line = 0; line < hypothesis_count; ++line) {
    const bool all_empty = std::all_of(sets.begin(), sets.end(), [&](const auto& set) { return set[line].empty(); });
    if (!all_empty) continue;
    std::string problem = "empty reference";
    if (sets.size() > 1) {
      problem = "empty in every reference file (";
      for (std::size_t k = 0; k < reference_paths.size(); ++k) problem += (k ? ", " : "") + reference_paths[k];
      problem += ")";
    }
    throw_at(reference_paths.front(), line + 1, problem + "; a segment needs at least one reference");
  }
  return sets;
}

}  // namespace attn::eval
