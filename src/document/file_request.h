#pragma once
// `attn translate --format …` as a whole: a file (or stdin) read whole in its format, translated by
// a loaded model sentence by sentence, written back whole (a file atomically, or stdout).
#include <iosfwd>
#include <string>
#include <vector>

#include "decode/model_directory.h"
#include "decode/batch_translator.h"
#include "document/document_file.h"

namespace attn::document {

struct FileRequest {
  std::string input = "-", output = "-";  // "-": standard input / output
  Format format = Format::text;
  std::string language;  // the source's sentence rules; "": the model's source language
  BatchTranslatorOptions options;
  std::string shortlist;  // a shortlist file, "" = the whole vocabulary
};

struct FileTotals {
  BatchStatistics statistics;
  int segments = 0, sentences = 0;
  std::vector<std::string> warnings;
};

// Throws Error naming the input and what is wrong with it; the output is then not written.
FileTotals translate_document_file(const LoadedModel& model, const FileRequest& request, std::istream& standard_input,
                                   std::ostream& standard_output);

}  // namespace attn::document
