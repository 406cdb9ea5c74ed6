#include "data/vocabulary_training_report.h"

#include <iomanip>
#include <sstream>

#include "data/vocabulary.h"

namespace attn::data {

std::string describe_vocabulary_training(const VocabularyTrainingReport& report) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  out << "vocabulary: " << report.vocab_size << " pieces (pad=" << kPadId << " unk=" << kUnkId << " bos=" << kBosId
      << " eos=" << kEosId << ", 256 byte-fallback pieces)\n"
      << "  wrote " << report.model_file.string() << " and " << report.vocab_file.string() << "\n";
  for (const auto& input : report.inputs) {
    out << "  " << input.file.string() << ": " << input.sentences << " sentences, " << input.pieces_per_sentence()
        << " pieces per sentence, byte-fallback pieces " << std::setprecision(4) << 100.0 * input.byte_piece_fraction()
        << std::setprecision(2) << "%\n";
  }
  out << "  training " << report.training_seconds << " s, statistics " << report.statistics_seconds << " s\n";
  return out.str();
}

}  // namespace attn::data
