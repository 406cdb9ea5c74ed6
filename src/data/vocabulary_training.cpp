#include "data/vocabulary_training.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/text_file.h"
#include "data/vocabulary.h"

namespace attn::data {
namespace {

// Feeds the sentences we already read and validated to the trainer.
class LinesIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LinesIterator(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return next_ >= lines_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return lines_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  std::size_t next_ = 0;
};

std::unordered_map<std::string, std::string> trainer_options(const VocabularyTrainingOptions& options) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(options.vocab_size)},
      // Exact round trip: no Unicode normalisation (NFKC would fold e.g. "ﬁ" into "fi"), spaces kept
      // as they are, every character of the text in the vocabulary and byte pieces for the rest.
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},  // "▁" before the first word, dropped again by decoding
      {"character_coverage", "1.0"},
      {"byte_fallback", "true"},
      {"split_by_whitespace", "true"},
      // The special ids of vocabulary.h.
      {"pad_id", std::to_string(kPadId)},
      {"unk_id", std::to_string(kUnkId)},
      {"bos_id", std::to_string(kBosId)},
      {"eos_id", std::to_string(kEosId)},
      {"pad_piece", std::string(kPadPiece)},
      {"unk_piece", std::string(kUnkPiece)},
      {"bos_piece", std::string(kBosPiece)},
      {"eos_piece", std::string(kEosPiece)},
      // Every sentence takes part, in order, however long (the default skips lines over 4192 bytes).
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"max_sentence_length", "1000000"},
      {"hard_vocab_limit", "true"},
      {"num_threads", std::to_string(threads)},
      {"minloglevel", options.verbose ? "0" : "2"},  // 2 = errors only
      {"model_prefix", ""},                          // we write the files ourselves, atomically
  };
}

std::string vocab_file_text(const sentencepiece::SentencePieceProcessor& processor) {
  std::string text;
  char score[32];
  for (int id = 0; id < processor.GetPieceSize(); ++id) {
    const auto end = std::to_chars(score, score + sizeof score, processor.GetScore(id)).ptr;
    text.append(processor.IdToPiece(id)).append("\t").append(score, end).append("\n");
  }
  return text;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

VocabularyTrainingReport train_vocabulary(const VocabularyTrainingOptions& options) {
  if (options.inputs.empty()) throw Error("vocabulary training needs at least one input file");
  if (options.model_prefix.empty()) throw Error("vocabulary training needs a model prefix");
  const auto start = std::chrono::steady_clock::now();

  std::vector<std::vector<std::string>> per_input;
  std::vector<std::string> sentences;
  for (const auto& input : options.inputs) {
    per_input.push_back(read_text_lines(input));
    for (const auto& line : per_input.back()) {
      if (!line.empty()) sentences.push_back(line);
    }
  }
  if (sentences.empty()) throw Error("vocabulary training: the input files hold no text");

  LinesIterator iterator(sentences);
  std::string model_bytes;
  const auto status = sentencepiece::SentencePieceTrainer::Train(trainer_options(options), &iterator, &model_bytes);
  if (!status.ok()) throw Error("vocabulary training failed: " + status.ToString());
  sentences = {};

  VocabularyTrainingReport report;
  report.model_file = options.model_prefix;
  report.model_file += ".model";
  report.vocab_file = options.model_prefix;
  report.vocab_file += ".vocab";
  sentencepiece::SentencePieceProcessor processor;
  if (!processor.LoadFromSerializedProto(model_bytes).ok()) throw Error("vocabulary training produced no valid model");
  write_file_atomic(report.model_file, model_bytes);
  write_file_atomic(report.vocab_file, vocab_file_text(processor));
  report.training_seconds = seconds_since(start);

  const auto statistics_start = std::chrono::steady_clock::now();
  const auto vocabulary = Vocabulary::from_bytes(std::move(model_bytes), report.model_file.string());
  report.vocab_size = vocabulary.size();
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    InputStatistics stats{.file = options.inputs[i]};
    for (const auto& ids : vocabulary.encode_lines(per_input[i])) {
      if (ids.empty()) continue;
      ++stats.sentences;
      stats.pieces += ids.size();
      for (const auto id : ids) stats.byte_pieces += vocabulary.is_byte(id) ? 1 : 0;
    }
    report.inputs.push_back(std::move(stats));
  }
  report.statistics_seconds = seconds_since(statistics_start);
  return report;
}

}  // namespace attn::data
