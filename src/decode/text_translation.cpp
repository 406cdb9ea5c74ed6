#include "decode/text_translation.h"

#include <fstream>
#include <memory>

#include "core/atomic_file.h"
#include "core/error.h"
#include "decode/attention_export.h"
#include "decode/shortlist.h"

namespace attn {

TranslationStreamTotals translate_text(const LoadedModel& model, const TextTranslationRequest& request,
                                       std::istream& standard_input, std::ostream& standard_output,
                                       std::ostream& warnings) {
  BatchTranslatorOptions options = request.options;
  TranslationStreamOptions stream;
  stream.chunk_lines = request.chunk_lines;
  stream.alignment = request.alignment;
  stream.align.layer = request.alignment_layer;
  stream.align.threshold = request.alignment_threshold;
  if (request.alignment) {
    if (options.search.n_best > 1)
      throw Error("--alignment aligns the best translation: it does not go with --n-best above 1");
    stream.align = resolve_alignment(model.model->config(), options.attention, request.alignment_layer,
                                     request.alignment_head, request.alignment_threshold);
  }
  options.export_attention = !request.attention.empty() || request.alignment;
  if (!request.shortlist.empty())
    options.shortlist = std::make_shared<const Shortlist>(Shortlist::load(request.shortlist, *model.vocabulary));
  BatchTranslator translator(*model.model, *model.vocabulary, options);
  std::ifstream file;
  if (request.input != "-") {
    file.open(request.input, std::ios::binary);
    if (!file) throw_in(request.input, "cannot open");
  }
  std::istream& in = request.input == "-" ? standard_input : file;
  const std::string in_name = request.input == "-" ? "<stdin>" : request.input;
  // A file is written whole or not at all; standard output streams chunk by chunk.
  std::unique_ptr<AtomicFileWriter> writer;
  if (request.output != "-") writer = std::make_unique<AtomicFileWriter>(request.output);
  std::ostream& out = writer ? writer->stream() : standard_output;
  std::unique_ptr<AtomicFileWriter> attention;
  if (!request.attention.empty()) attention = std::make_unique<AtomicFileWriter>(request.attention);

  const TranslationStreamTotals totals = translate_stream(translator, *model.vocabulary, in, in_name, out,
                                                          attention ? &attention->stream() : nullptr, warnings, stream);
  if (attention) attention->commit();
  if (writer) writer->commit();
  return totals;
}

}  // namespace attn
