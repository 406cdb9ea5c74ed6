// Pieces to words, by hand.
#include "inspect/word_pieces.h"

#include <gtest/gtest.h>

namespace attn::inspect {
namespace {

using Strings = std::vector<std::string>;
using Ints = std::vector<int>;

TEST(WordPieces, WordStartsAndContinuations) {
  const PieceWords grouped = group_pieces({"▁In", "▁the", "▁begin", "ning", "</s>"});
  EXPECT_EQ(grouped.words, (Strings{"In", "the", "beginning"}));
  EXPECT_EQ(grouped.word_of_piece, (Ints{0, 1, 2, 2, -1}));
}

TEST(WordPieces, LeadingPieceWithoutWordStartOpensTheFirstWord) {
  const PieceWords grouped = group_pieces({"In", "▁the", "▁be", "gin", "ning", "</s>"});
  EXPECT_EQ(grouped.words, (Strings{"In", "the", "beginning"}));
  EXPECT_EQ(grouped.word_of_piece, (Ints{0, 1, 2, 2, 2, -1}));
}

TEST(WordPieces, LoneWordStartIsContinuedByTheNextPiece) {
  const PieceWords grouped = group_pieces({"▁", "¿Qué", "▁es", "?", "</s>"});
  EXPECT_EQ(grouped.words, (Strings{"¿Qué", "es?"}));
  EXPECT_EQ(grouped.word_of_piece, (Ints{0, 0, 1, 1, -1}));
}

TEST(WordPieces, SentenceMarkersBelongToNoWord) {
  const PieceWords grouped = group_pieces({"<s>", "la", "▁casa", "</s>"});
  EXPECT_EQ(grouped.words, (Strings{"la", "casa"}));
  EXPECT_EQ(grouped.word_of_piece, (Ints{-1, 0, 1, -1}));
}

TEST(WordPieces, EmptySentence) {
  const PieceWords grouped = group_pieces({"</s>"});
  EXPECT_TRUE(grouped.words.empty());
  EXPECT_EQ(grouped.word_of_piece, (Ints{-1}));
  EXPECT_TRUE(group_pieces({}).words.empty());
}

}  // namespace
}  // namespace attn::inspect
