#include "inspect/word_pieces.h"

#include <string_view>

namespace attn::inspect {

namespace {

constexpr std::string_view kWordStart = "\xe2\x96\x81";  // "▁", U+2581 LOWER ONE EIGHTH BLOCK

bool is_boundary_token(const std::string& piece) { return piece == "</s>" || piece == "<s>"; }

}  // namespace

PieceWords group_pieces(const std::vector<std::string>& pieces) {
  PieceWords result;
  result.word_of_piece.reserve(pieces.size());
  // After "</s>" or "<s>" a piece without "▁" still needs a word of its own rather than joining
  // the word before the marker.
  bool open = false;
  for (const std::string& piece : pieces) {
    if (is_boundary_token(piece)) {
      result.word_of_piece.push_back(-1);
      open = false;
      continue;
    }
    const bool starts = std::string_view(piece).starts_with(kWordStart);
    if (starts || !open) {
      result.words.emplace_back();
      open = true;
    }
    result.words.back() += starts ? piece.substr(kWordStart.size()) : piece;
    result.word_of_piece.push_back(static_cast<int>(result.words.size()) - 1);
  }
  return result;
}

}  // namespace attn::inspect
