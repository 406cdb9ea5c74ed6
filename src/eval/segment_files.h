#pragma once
// The files `attn bleu` scores: a hypothesis file and reference files of one segment per line,
// read as the sacreBLEU command line reads them.
#include <cstddef>
#include <string>
#include <vector>

#include "eval/reference_sets.h"

namespace attn::eval {

// Reads a file of one segment per line and strips trailing whitespace from each line, as the
// sacreBLEU command line does before scoring. Throws Error naming file and line (invalid UTF-8).
std::vector<std::string> read_segments(const std::string& path);

// Reads one reference set per file. Throws Error if there is no file, unless each file has
// hypothesis_count lines (naming it and hypothesis_path), or if a line is empty in every file:
// sacreBLEU drops empty references and refuses a segment left with none.
ReferenceSets read_reference_files(const std::vector<std::string>& reference_paths, const std::string& hypothesis_path,
                                   std::size_t hypothesis_count);

}  // namespace attn::eval
