#pragma once
// The shared subword vocabulary of source and target: a SentencePiece BPE model, loaded from a
// PREFIX.model file written by train_vocabulary (vocabulary_training.h).
//
// Round trip: decode(encode(text)) == text for every valid UTF-8 line that does not contain
// U+2581 "▁" (SentencePiece's own space marker, which decodes as a plain space). That includes
// leading, trailing and repeated spaces, tabs, control characters and characters never seen in
// training (they go through byte-fallback pieces <0x00>..<0xFF>), because the model is trained
// with identity normalisation, no whitespace clean-up and byte fallback (checked against
// SentencePiece 0.1.97 by tests/data/vocabulary_test.cpp).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/special_tokens.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attn::data {

// Special ids. They are part of the model file format: train_vocabulary stores them in the model
// and Vocabulary::load refuses a model with any other assignment, so that the model, the batches
// and the decoder can rely on them.
// (core/special_tokens.h: pad 0 never produced by encode; unk 1, unused in practice thanks to
// byte fallback; bos 2 begins every target input; eos 3 ends every source and target output)
using ::attn::kBosId;
using ::attn::kEosId;
using ::attn::kPadId;
using ::attn::kUnkId;
inline constexpr std::string_view kPadPiece = "<pad>";
inline constexpr std::string_view kUnkPiece = "<unk>";
inline constexpr std::string_view kBosPiece = "<s>";
inline constexpr std::string_view kEosPiece = "</s>";

class Vocabulary {
 public:
  // Loads PREFIX.model. Throws Error naming the file if it is missing, corrupt, or was not
  // trained with the special ids above.
  static Vocabulary load(const std::filesystem::path& model_file);
  // Same, from the bytes of a model file; `name` stands for the file in error messages.
  static Vocabulary from_bytes(std::string model_bytes, const std::string& name);

  Vocabulary(Vocabulary&&) noexcept;
  Vocabulary& operator=(Vocabulary&&) noexcept;
  ~Vocabulary();

  // Token ids of one line, without BOS/EOS. Never contains pad, bos or eos.
  // Const and thread-safe: many lines may be encoded in parallel.
  std::vector<std::int32_t> encode(std::string_view text) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  // Encodes many lines in parallel (OpenMP); result[i] belongs to lines[i].
  std::vector<std::vector<std::int32_t>> encode_lines(std::span<const std::string> lines) const;

  // Text of a sequence of ids; pad, bos and eos are skipped. Throws Error on an id outside
  // [0, size()).
  std::string decode(std::span<const std::int32_t> ids) const;
  // A translation's text as one line: decode's, with every line break in it ("\r" or "\n", which a
  // model can generate as the byte pieces <0x0D> and <0x0A>) made a space, so that a translation
  // never spills onto the next line of a line-based output.
  std::string decode_line(std::span<const std::int32_t> ids) const;
  // Same from pieces; throws Error on a piece the vocabulary does not have.
  std::string decode_pieces(std::span<const std::string> pieces) const;

  std::int32_t size() const;
  const std::string& piece(std::int32_t id) const;  // throws Error outside [0, size())
  // Id of a piece, or kUnkId if the vocabulary has no such piece.
  std::int32_t piece_id(std::string_view piece) const;
  bool is_byte(std::int32_t id) const;    // one of the byte-fallback pieces <0x00>..<0xFF>
  bool is_unused(std::int32_t id) const;  // a piece SentencePiece keeps but never emits
  // A piece's BPE score: of two pairs of pieces that could be joined, the one whose joined piece
  // scores higher is joined first (bpe_dropout.h).
  float score(std::int32_t id) const;

  // The model file's bytes, e.g. to key caches of tokenised text.
  const std::string& model_bytes() const { return model_bytes_; }
  const std::string& name() const { return name_; }

 private:
  Vocabulary(std::string model_bytes, std::string name);
  void check_id(std::int32_t id) const;

  std::string model_bytes_;
  std::string name_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace attn::data
