#pragma once
// `attn vocab encode` and `attn vocab decode`: text lines to lines of token ids or pieces
// (space-separated) and back, one line per line.
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocabulary.h"

namespace attn::data {

// The words of a line split at spaces, runs of spaces and spaces at either end giving no empty
// word. Pieces never contain a space (SentencePiece writes it as "▁").
std::vector<std::string> split_at_spaces(std::string_view line);

// A line of valid UTF-8 text as its ids (or with `pieces` its pieces), separated by single spaces.
std::string encode_line(const Vocabulary& vocabulary, std::string_view line, bool pieces);
// A line of ids (or with `pieces` of pieces) as text. A word that is no id throws
// Error("\"word\" is not a token id"); the vocabulary's own errors pass on.
std::string decode_line(const Vocabulary& vocabulary, std::string_view line, bool pieces);

// Each line of `in` encoded (decoded) to a line of `out`, written as it goes. Invalid UTF-8 (for
// encoding) and the errors of decoding name the line: "name:line: ..."; a failed read throws
// Error("name: read error").
void encode_lines(const Vocabulary& vocabulary, std::istream& in, const std::string& name, std::ostream& out,
                  bool pieces);
void decode_lines(const Vocabulary& vocabulary, std::istream& in, const std::string& name, std::ostream& out,
                  bool pieces);

}  // namespace attn::data
