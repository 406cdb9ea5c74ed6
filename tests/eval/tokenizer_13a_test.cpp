// The mteval-v13a tokenizer. Every expectation is worked out by hand from sacreBLEU's
// tokenizer_13a.py and tokenizer_re.py; the comments walk through the rules that decide it.
#include "eval/tokenizer_13a.h"

#include <gtest/gtest.h>

namespace attn::eval {
namespace {

TEST(Tokenizer13a, SplitsPunctuationButNotApostrophes) {
  // '!' is in the split class; ',' after a non-digit is split; "'" is never split.
  EXPECT_EQ(tokenize_13a("Hello, world! It's fine."), "Hello , world ! It's fine .");
  EXPECT_EQ(tokenize_13a("(a) [b] {c} \"d\" $5 x/y"), "( a ) [ b ] { c } \" d \" $ 5 x / y");
}

TEST(Tokenizer13a, PeriodsAndCommasNextToDigits) {
  // "3.14" and "1,000": every '.' or ',' has a digit on both sides, so no rule fires.
  EXPECT_EQ(tokenize_13a("pi is 3.14 and 1,000 is big"), "pi is 3.14 and 1,000 is big");
  // "end." : non-digit then '.', split. "3." at the end: the '.' has a digit before it, but the
  // next rule splits a '.' followed by a non-digit (the padding space).
  EXPECT_EQ(tokenize_13a("the end."), "the end .");
  EXPECT_EQ(tokenize_13a("it was 3."), "it was 3 .");
  // ".5": a non-digit (space) before the '.', so it is split off even though a digit follows.
  EXPECT_EQ(tokenize_13a("only .5 left"), "only . 5 left");
  // "x,y": non-digit before ','.
  EXPECT_EQ(tokenize_13a("x,y"), "x , y");
  // "1,a": digit before ',' (first rule skips it) but a non-digit after (second rule splits).
  EXPECT_EQ(tokenize_13a("1,a"), "1 , a");
}

TEST(Tokenizer13a, ReplaysNonOverlappingMatches) {
  // "wait..." : the first rule matches ("t", ".") then (".", ".") and leaves the last '.', which
  // the second rule splits off because the padding space follows.
  EXPECT_EQ(tokenize_13a("wait..."), "wait . . .");
  // "a.,b": (a,.) matches first, so ',' is only split off by the second rule, before 'b'.
  EXPECT_EQ(tokenize_13a("a.,b"), "a . , b");
}

TEST(Tokenizer13a, DashAfterDigit) {
  EXPECT_EQ(tokenize_13a("pages 10-20"), "pages 10 - 20");
  EXPECT_EQ(tokenize_13a("a well-known e-mail"), "a well-known e-mail");
  EXPECT_EQ(tokenize_13a("COVID-19"), "COVID-19");  // the dash follows 'D', not a digit
}

TEST(Tokenizer13a, UnescapesEntitiesInOrder) {
  EXPECT_EQ(tokenize_13a("&quot;Yes&quot; &amp; no &lt;b&gt;"), "\" Yes \" & no < b >");
  // "&amp;lt;" becomes "&lt;" in the "&amp;" pass and then "<" in the "&lt;" pass.
  EXPECT_EQ(tokenize_13a("&amp;lt;"), "<");
  // "&amp;quot;" has no "&quot;" when that pass runs; "&amp;" then leaves "&quot;" behind.
  EXPECT_EQ(tokenize_13a("&amp;quot;"), "& quot ;");
  EXPECT_EQ(tokenize_13a("AT&T"), "AT & T");
}

TEST(Tokenizer13a, SkippedMarkersAndNewlines) {
  EXPECT_EQ(tokenize_13a("a <skipped> b"), "a b");
  // One pass of replace: removing the inner marker leaves a new "<skipped>" that stays.
  EXPECT_EQ(tokenize_13a("<skip<skipped>ped>"), "< skipped >");
  EXPECT_EQ(tokenize_13a("well-\nknown\nword"), "wellknown word");
}

TEST(Tokenizer13a, SplitsOnUnicodeWhitespace) {
  // U+00A0, U+2009 and U+3000 separate tokens like a space does (Python's str.split()).
  EXPECT_EQ(tokenize_13a("le\u00A0chat\u2009noir\u3000!"), "le chat noir !");
  // Non-ASCII letters and digits are "not 0-9": the period after them is split off.
  EXPECT_EQ(tokenize_13a("\u00E9t\u00E9. \u0663."), "\u00E9t\u00E9 . \u0663 .");
}

TEST(Tokenizer13a, EmptyAndBlank) {
  EXPECT_EQ(tokenize_13a(""), "");
  EXPECT_EQ(tokenize_13a(" \t\u00A0 "), "");
}

}  // namespace
}  // namespace attn::eval
