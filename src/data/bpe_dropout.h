#pragma once
// BPE-dropout (Provilkov, Emelianenko and Voita, 2020): the vocabulary's BPE segmentation with each
// merge skipped at random, so that training sees the same text cut into pieces in many ways, a
// regulariser for small corpora. SentencePiece has it too (SampleEncode), but draws from a
// per-thread generator seeded once per process, so its samples cannot be reproduced; this one draws
// from a seed alone, which keeps a resumed run bit-exact and lets lines be cut in parallel.
//
// The merges are SentencePiece's own (bpe_model.cc, as of 0.1.97): the text as the vocabulary
// normalises it (here: the concatenation of Vocabulary::encode's pieces) split into characters,
// then, repeatedly, the adjacent pair whose joined piece is in the vocabulary with the highest
// score (on a tie, the leftmost) is joined, unless skipped with probability `dropout`; a skipped
// pair is not tried again, though the pieces may still join others. A piece that is not in the
// vocabulary (a character never seen in training) becomes its UTF-8 bytes' byte pieces, as
// SentencePiece's byte fallback does. With dropout 0 the ids are exactly Vocabulary::encode's.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/vocabulary.h"

namespace attn::data {

class BpeDropout {
 public:
  // Reads the vocabulary's pieces and scores. Throws Error if it has unused pieces (SentencePiece
  // would split those again; attn vocab train never makes them). The vocabulary must outlive this.
  explicit BpeDropout(const Vocabulary& vocabulary);

  // The ids of `text`, each merge skipped with probability `dropout` in [0, 1], the draws made from
  // `seed` alone. dropout 0: Vocabulary::encode(text); dropout 1: one piece per character (or its
  // bytes). Const and thread-safe.
  std::vector<std::int32_t> encode(std::string_view text, double dropout, std::uint64_t seed) const;

 private:
  struct Piece {
    std::int32_t id;
    float score;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  const Piece* find(std::string_view piece) const {
    const auto it = pieces_.find(piece);
    return it == pieces_.end() ? nullptr : &it->second;
  }

  const Vocabulary& vocabulary_;
  std::unordered_map<std::string, Piece, Hash, std::equal_to<>> pieces_;  // ordinary pieces only
  std::vector<std::string> surface_;  // per id: the text it stands for (a byte piece: its byte)
  std::int32_t byte_ids_[256];        // the byte piece of each byte, or kUnkId
};

}  // namespace attn::data
