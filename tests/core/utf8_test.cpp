#include "core/utf8.h"

#include <gtest/gtest.h>

namespace attn {

TEST(Utf8, AcceptsValidText) {
  EXPECT_FALSE(find_invalid_utf8("plain ascii"));
  EXPECT_FALSE(find_invalid_utf8("Jehová crió ¶ \xC2\xA0 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(find_invalid_utf8(""));
}

TEST(Utf8, FindsTheFirstBadByte) {
  EXPECT_EQ(find_invalid_utf8("ab\xFF"), 2u);             // not a lead byte
  EXPECT_EQ(find_invalid_utf8("a\xC3"), 1u);              // truncated sequence
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);           // overlong '/'
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);      // UTF-16 surrogate U+D800
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);   // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xC3\x28"), 0u);           // bad continuation byte
}

}  // namespace attn
