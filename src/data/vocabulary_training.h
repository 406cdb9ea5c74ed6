#pragma once
// Training the shared SentencePiece BPE vocabulary on the training text of both languages.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace attn::data {

struct VocabularyTrainingOptions {
  std::vector<std::filesystem::path> inputs;  // UTF-8 text, one sentence per line, all languages
  std::filesystem::path model_prefix;         // writes PREFIX.model and PREFIX.vocab
  std::int32_t vocab_size = 8000;             // the paper used ~37000 for WMT; 8000 suits a Bible
  bool verbose = false;                       // let SentencePiece log its progress to stderr
};

// How the new vocabulary cuts one input file.
struct InputStatistics {
  std::filesystem::path file;
  std::size_t sentences = 0;    // non-empty lines
  std::size_t pieces = 0;       // over all sentences
  std::size_t byte_pieces = 0;  // byte-fallback pieces among them

  double pieces_per_sentence() const { return sentences ? double(pieces) / double(sentences) : 0.0; }
  double byte_piece_fraction() const { return pieces ? double(byte_pieces) / double(pieces) : 0.0; }
};

struct VocabularyTrainingReport {
  std::filesystem::path model_file;  // PREFIX.model
  std::filesystem::path vocab_file;  // PREFIX.vocab: "piece<TAB>score" per line, in id order
  std::int32_t vocab_size = 0;
  std::vector<InputStatistics> inputs;  // one per input file, in order
  double training_seconds = 0;
  double statistics_seconds = 0;
};

// Trains a BPE model with the special ids of vocabulary.h and options that make decoding exact
// (identity normalisation, whitespace kept as is, byte fallback, character coverage 1.0), writes
// both files atomically, then measures the result on the inputs. Throws Error naming the file on
// unreadable or invalid UTF-8 input, and passes on SentencePiece's message if training fails
// (e.g. a vocabulary size larger than the text supports).
VocabularyTrainingReport train_vocabulary(const VocabularyTrainingOptions& options);

}  // namespace attn::data
