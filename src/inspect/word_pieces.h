#pragma once
// SentencePiece pieces grouped into words, so that attention over pieces can be read over words.
#include <string>
#include <vector>

namespace attn::inspect {

struct PieceWords {
  std::vector<std::string> words;  // the words' text, without "▁"
  std::vector<int> word_of_piece;  // for each piece, the index of its word, or -1 (no word)
};

// A piece that starts with "▁" (U+2581) starts a new word; any other piece continues the current
// word (the first word if no word has started yet, as when a text begins without "▁"). "</s>" and
// "<s>" belong to no word (-1). A lone "▁" starts a word of its own that the next piece continues:
// ["▁", "¿Qué"] is the one word "¿Qué".
PieceWords group_pieces(const std::vector<std::string>& pieces);

}  // namespace attn::inspect
