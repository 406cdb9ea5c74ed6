#pragma once
// `attn translate` as a whole, given its options and a loaded model: the options checked against
// the model, the shortlist loaded, the input read ("-": stdin) and the translation written ("-":
// stdout, chunk by chunk; a file whole or not at all), with the attention records and the word
// alignment when asked. The option names in its errors are the command's.
#include <istream>
#include <ostream>
#include <string>

#include "decode/model_directory.h"
#include "decode/translation_stream.h"
#include "decode/batch_translator.h"

namespace attn {

struct TextTranslationRequest {
  std::string input = "-";   // one sentence per line; "-": standard input
  std::string output = "-";  // "-": standard output
  // Attention records, one JSON line per input line ("" = none); options.attention chooses which.
  std::string attention;
  BatchTranslatorOptions options;
  std::size_t chunk_lines = 10000;  // lines translated at a time
  // --alignment: the best translation's word alignment after " ||| ", from the cross-attention
  // of `alignment_layer` (-1: the default layer) and `alignment_head` ("mean" or a number).
  bool alignment = false;
  int alignment_layer = -1;
  std::string alignment_head = "mean";
  double alignment_threshold = 0;
  std::string shortlist;  // a shortlist file (attn shortlist build); "" = the whole vocabulary
};

// Translates as the request says; `standard_input` and `standard_output` stand for "-", warnings
// about cropped inputs go to `warnings`. Throws Error naming the file or option at fault; the
// output files are then left as they were.
TranslationStreamTotals translate_text(const LoadedModel& model, const TextTranslationRequest& request,
                                       std::istream& standard_input, std::ostream& standard_output,
                                       std::ostream& warnings);

}  // namespace attn
