#include "decode/translation_stream.h"

#include "core/error.h"
#include "core/text_file.h"
#include "core/utf8.h"
#include "decode/attention_export.h"
#include "decode/attention_records.h"
#include "decode/nbest_format.h"
#include "decode/translation_summary.h"
#include "inspect/attention_record.h"

namespace attn {

namespace {

// The warnings named line by line; later ones are only counted.
constexpr std::size_t kCropWarnings = 5;

}  // namespace

bool read_line_chunk(std::istream& in, const std::string& name, std::size_t& line_number, std::size_t max_lines,
                     std::vector<std::string>& lines) {
  lines.clear();
  std::string line;
  while (lines.size() < max_lines && read_line(in, line)) {
    ++line_number;
    if (auto bad = find_invalid_utf8(line))
      throw_at(name, line_number, "invalid UTF-8 at byte " + std::to_string(*bad + 1));
    lines.push_back(std::move(line));
  }
  return !lines.empty();
}

TranslationStreamTotals translate_stream(BatchTranslator& translator, const data::Vocabulary& vocabulary,
                                         std::istream& in, const std::string& name, std::ostream& out,
                                         std::ostream* attention, std::ostream& warnings,
                                         const TranslationStreamOptions& options) {
  const BatchTranslatorOptions& translate = translator.options();
  const int n_best = translate.search.n_best;
  TranslationStreamTotals totals;
  std::vector<std::string> lines;
  while (read_line_chunk(in, name, totals.lines, options.chunk_lines, lines)) {
    const std::size_t first = totals.lines - lines.size() + 1;
    const auto translations = translator.translate(lines);
    for (std::size_t i = 0; i < translations.size(); ++i) {
      const BatchTranslation& t = translations[i];
      if (t.cropped && ++totals.cropped <= kCropWarnings)
        warnings << "warning: " << name << ":" << first + i << ": " << t.source_tokens << " tokens, cropped to "
                 << translate.max_input_tokens << "\n";
      std::string links;
      if (translate.export_attention) {
        const inspect::AttentionRecord record = translation_record(
            vocabulary, static_cast<std::int64_t>(first + i), lines[i], t.text, t.source_ids, t.n_best, t.attention);
        // An empty line has no translation and no attention: its record has none either.
        if (attention) *attention << inspect::to_json_line(record) << "\n";
        if (options.alignment)
          links = std::string(" ||| ") +
                  (t.n_best.empty() ? "" : inspect::format_pharaoh(inspect::align_record(record, options.align)));
      }
      if (n_best <= 1)
        out << t.text << links << "\n";
      else
        out << format_nbest(first + i - 1, t.n_best_text, t.n_best);
    }
    out.flush();
    add_statistics(totals.statistics, translator.statistics());
  }
  if (totals.cropped > kCropWarnings)
    warnings << "warning: " << totals.cropped - kCropWarnings << " more inputs cropped\n";
  return totals;
}

}  // namespace attn
