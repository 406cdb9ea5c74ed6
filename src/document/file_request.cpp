#include "document/file_request.h"

#include <iostream>
#include <iterator>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/text_file.h"
#include "decode/shortlist.h"
#include "document/model_sentences.h"

namespace attn::document {

FileTotals translate_document_file(const LoadedModel& model, const FileRequest& request, std::istream& standard_input,
                                   std::ostream& standard_output) {
  const std::string what = request.input == "-" ? "standard input" : request.input;
  const std::string bytes = request.input == "-" ? std::string(std::istreambuf_iterator<char>(standard_input), {})
                                                 : read_file_bytes(request.input);
  BatchTranslatorOptions options = request.options;
  if (!request.shortlist.empty())
    options.shortlist = std::make_shared<const Shortlist>(Shortlist::load(request.shortlist, *model.vocabulary));
  ModelSentences sentences(model, options);
  const DocumentOptions o = document_options(sentences, model, request.language);
  FileTranslation t;
  try {
    t = translate_file(bytes, request.format, std::ref(sentences), o);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  if (request.output == "-") {
    standard_output << t.bytes << std::flush;
  } else {
    write_file_atomic(request.output, t.bytes);
  }
  FileTotals totals;
  totals.statistics = sentences.statistics();
  totals.segments = t.segments;
  totals.sentences = static_cast<int>(t.details.sentences.size());
  totals.warnings = t.details.warnings;
  return totals;
}

}  // namespace attn::document
