// What `attn vocab train` prints, for a hand-made report with the text written out by hand: the
// special ids (pad=0 unk=1 bos=2 eos=3), pieces per sentence to two decimals, the byte-fallback
// share as a percentage to four, the times to two.
#include "data/vocabulary_training_report.h"

#include <gtest/gtest.h>

namespace attn::data {
namespace {

TEST(VocabularyTrainingReport, DescribedLineByLine) {
  VocabularyTrainingReport report;
  report.model_file = "v/vocab.model";
  report.vocab_file = "v/vocab.vocab";
  report.vocab_size = 400;
  report.inputs = {InputStatistics{"a.en", 4, 10, 1}, InputStatistics{"b.es", 3, 7, 0}};
  report.training_seconds = 1.234;
  report.statistics_seconds = 0.126;
  // a.en: 10 / 4 = 2.5 pieces per sentence, 1 / 10 = 10% byte pieces; b.es: 7 / 3 = 2.33, none.
  EXPECT_EQ(describe_vocabulary_training(report),
            "vocabulary: 400 pieces (pad=0 unk=1 bos=2 eos=3, 256 byte-fallback pieces)\n"
            "  wrote v/vocab.model and v/vocab.vocab\n"
            "  a.en: 4 sentences, 2.50 pieces per sentence, byte-fallback pieces 10.0000%\n"
            "  b.es: 3 sentences, 2.33 pieces per sentence, byte-fallback pieces 0.0000%\n"
            "  training 1.23 s, statistics 0.13 s\n");
}

TEST(VocabularyTrainingReport, NoSentencesGiveZeroes) {
  VocabularyTrainingReport report;
  report.model_file = "m.model";
  report.vocab_file = "m.vocab";
  report.vocab_size = 300;
  report.inputs = {InputStatistics{"empty.txt", 0, 0, 0}};
  EXPECT_EQ(describe_vocabulary_training(report),
            "vocabulary: 300 pieces (pad=0 unk=1 bos=2 eos=3, 256 byte-fallback pieces)\n"
            "  wrote m.model and m.vocab\n"
            "  empty.txt: 0 sentences, 0.00 pieces per sentence, byte-fallback pieces 0.0000%\n"
            "  training 0.00 s, statistics 0.00 s\n");
}

}  // namespace
}  // namespace attn::data
