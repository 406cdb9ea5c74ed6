#include "core/utf8.h"

#include <gtest/gtest.h>

namespace attn {

TEST(Utf8, AcceptsValidText) {
  EXPECT_FALSE(find_invalid_utf8("plain ascii"));
  EXPECT_FALSE(find_invalid_utf8("Jehová crió ¶ \xC2\xA0 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(find_invalid_utf8(""));
}

TEST(Utf8, FindsTheFirstBadByte) {
  EXPECT_EQ(find_invalid_utf8("ab\xFF"), 2u);            // not a lead byte
  EXPECT_EQ(find_invalid_utf8("a\xC3"), 1u);             // truncated sequence
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);     // UTF-16 surrogate U+D800
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xC3\x28"), 0u);          // bad continuation byte
}

}  // namespace attn

namespace attn {
namespace {

// Hand-worked encodings: é U+00E9 = C3 A9, € U+20AC = E2 82 AC, 😀 U+1F600 = F0 9F 98 80.
TEST(Utf8, DecodesAndEncodesCodePointsOfEveryLength) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  const char32_t expected[] = {U'a', U'\u00E9', U'\u20AC', U'\U0001F600'};
  const std::size_t lengths[] = {1, 2, 3, 4};
  std::string again;
  std::size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    const DecodedCodePoint d = decode_utf8_at(text, pos);
    EXPECT_EQ(d.code_point, expected[i]);
    EXPECT_EQ(d.length, lengths[i]);
    EXPECT_TRUE(d.valid);
    append_utf8(again, d.code_point);
    pos += d.length;
  }
  EXPECT_EQ(again, text);
}

// A byte that starts no well-formed sequence decodes alone as U+FFFD and says so; U+FFFD written
// in the text (EF BF BD) is a valid character.
TEST(Utf8, InvalidBytesDecodeAloneAsReplacementCharacters) {
  for (const std::string bad : {"\xFF", "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xC3\x28"}) {
    const DecodedCodePoint d = decode_utf8_at(bad, 0);
    EXPECT_EQ(d.code_point, U'\uFFFD');
    EXPECT_EQ(d.length, 1u);
    EXPECT_FALSE(d.valid);
  }
  const DecodedCodePoint written = decode_utf8_at("\xEF\xBF\xBD", 0);
  EXPECT_EQ(written.code_point, U'\uFFFD');
  EXPECT_EQ(written.length, 3u);
  EXPECT_TRUE(written.valid);
  EXPECT_FALSE(find_invalid_utf8("\xEF\xBF\xBD"));
}

}  // namespace
}  // namespace attn
