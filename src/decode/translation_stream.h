#pragma once
// `attn translate`'s loop: lines read a chunk at a time (so that any input fits in memory and
// stdout shows progress), translated, and written in input order: a line per input line, or
// Moses n-best lines (decode/nbest_format.h), with an attention record per line and the best
// translation's word alignment when asked.
#include <cstddef>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "data/vocabulary.h"
#include "decode/batch_translator.h"
#include "inspect/word_alignment.h"

namespace attn {

struct TranslationStreamOptions {
  std::size_t chunk_lines = 10000;  // lines read, translated and written at a time
  // Append " ||| " and the best translation's Pharaoh links to each line (Marian's --alignment);
  // the translator must export the attention that `align` reads (resolve_alignment).
  bool alignment = false;
  inspect::AlignmentOptions align;
};

struct TranslationStreamTotals {
  std::size_t lines = 0;       // lines read, empty ones included
  std::size_t cropped = 0;     // inputs cropped to the translator's max_input_tokens
  BatchStatistics statistics;  // of all chunks together
};

// Reads up to `max_lines` lines into `lines` (cleared first); `line_number` counts the lines read
// so far, across calls. Invalid UTF-8 throws Error("name:line: invalid UTF-8 at byte B"). False
// when no line was left.
bool read_line_chunk(std::istream& in, const std::string& name, std::size_t& line_number, std::size_t max_lines,
                     std::vector<std::string>& lines);

// Translates `in` (named `name` in errors and warnings) to `out`, flushed after each chunk. With
// the translator's export_attention, each line's record goes to `attention` when it is given.
// The first five cropped inputs are warned about by line on `warnings`, the rest counted at the
// end. With n_best above 1 the output is Moses n-best lines.
TranslationStreamTotals translate_stream(BatchTranslator& translator, const data::Vocabulary& vocabulary,
                                         std::istream& in, const std::string& name, std::ostream& out,
                                         std::ostream* attention, std::ostream& warnings,
                                         const TranslationStreamOptions& options);

}  // namespace attn
