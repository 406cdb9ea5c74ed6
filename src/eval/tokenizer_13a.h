#pragma once
// The mteval-v13a tokenizer, exactly as sacreBLEU's Tokenizer13a (tokenizer_13a.py + tokenizer_re.py).
#include <string>
#include <string_view>

namespace attn::eval {

// Tokenizes one segment and returns its tokens joined by single spaces, with no leading or trailing
// space. In order:
//   1. remove "<skipped>", remove "-\n", turn "\n" into " ";
//   2. unescape "&quot;" "&amp;" "&lt;" "&gt;" one after another (so "&amp;lt;" ends up as "<");
//   3. split off every character of  { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
//      (everything ASCII but letters, digits and ' , - .);
//   4. split off '.' and ',' unless preceded by a digit, then unless followed by a digit, so
//      "3.14" and "1,000" stay whole while "end." and "x,y" are split;
//   5. split off '-' after a digit ("2-3" gives "2 - 3", "well-known" stays);
//   6. split on Python whitespace (U+00A0 and friends included) and join with single spaces.
// Steps 4 and 5 replay Python's re.sub: non-overlapping two-character matches, left to right.
std::string tokenize_13a(std::string_view line);

}  // namespace attn::eval
