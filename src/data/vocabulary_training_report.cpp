#include "data/vocabulary_training_report.h"

#include <sstream>

#include "core/number_format.h"
#include "data/vocabulary.h"

namespace attn::data {

std::string describe_vocabulary_training(const VocabularyTrainingReport& report) {
  std::ostringstream out;
  out << "vocabulary: " << report.vocab_size << " pieces (pad=" << kPadId << " unk=" << kUnkId << " bos=" << kBosId
      << " eos=" << kEosId << ", 256 byte-fallback pieces)\n"
      << "  wrote " << report.model_file.string() << " and " << report.vocab_file.string() << "\n";
  for (const auto& input : report.inputs) {
    out << "  " << input.file.string() << ": " << input.sentences << " sentences, "
        << format_fixed(input.pieces_per_sentence(), 2) << " pieces per sentence, byte-fallback pieces "
        << format_fixed(100.0 * input.byte_piece_fraction(), 4) << "%\n";
  }
  out << "  training " << format_fixed(report.training_seconds, 2) << " s, statistics "
      << format_fixed(report.statistics_seconds, 2) << " s\n";
  return out.str();
}

}  // namespace attn::data
