// Python str semantics that sacreBLEU relies on. Expected values: Python's documented whitespace
// set and CPython's own test suite (Lib/test/test_str.py, test_lower), cited per test.
#include "eval/python_str.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attn::eval {
namespace {

using Pieces = std::vector<std::string_view>;

// str.isspace() is true for the characters of bidirectional class WS, B or S and of category Zs;
// these are all of them (U+180E stopped being whitespace in Unicode 6.3).
TEST(PythonWhitespace, IsExactlyPythonsSet) {
  const std::vector<char32_t> whitespace = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x1C,   0x1D,   0x1E,
                                            0x1F,   0x20,   0x85,   0xA0,   0x1680, 0x2000, 0x2001, 0x2002,
                                            0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
                                            0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  for (char32_t cp : whitespace) EXPECT_TRUE(is_python_whitespace(cp)) << std::hex << static_cast<unsigned>(cp);
  std::size_t count = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) count += is_python_whitespace(cp) ? 1 : 0;
  EXPECT_EQ(count, whitespace.size());
  for (char32_t cp : {0x08, 0x1B, 0x21, 0xAD, 0x180E, 0x200B, 0x2060, 0xFEFF}) {
    EXPECT_FALSE(is_python_whitespace(cp)) << std::hex << static_cast<unsigned>(cp);
  }
}

TEST(PythonSplit, SplitsOnUnicodeWhitespace) {
  EXPECT_EQ(split_python_whitespace("a\u00A0b\u2009c\u3000d"), (Pieces{"a", "b", "c", "d"}));
  EXPECT_EQ(split_python_whitespace("  lead\t\ttrail \n"), (Pieces{"lead", "trail"}));
  EXPECT_EQ(split_python_whitespace("x\x1Cy\xC2\x85z"), (Pieces{"x", "y", "z"}));      // U+001C and U+0085 too
  EXPECT_EQ(split_python_whitespace("zero\u200Bwidth"), (Pieces{"zero\u200Bwidth"}));  // not whitespace
  EXPECT_EQ(split_python_whitespace("\u00A0 \u3000"), Pieces{});
  EXPECT_EQ(split_python_whitespace(""), Pieces{});
}

TEST(PythonRstrip, StripsTrailingUnicodeWhitespace) {
  EXPECT_EQ(rstrip_python_whitespace("abc \u00A0\t\u2029"), "abc");
  EXPECT_EQ(rstrip_python_whitespace("  abc"), "  abc");
  EXPECT_EQ(rstrip_python_whitespace("caf\u00E9\u200B"), "caf\u00E9\u200B");
  EXPECT_EQ(rstrip_python_whitespace("\u3000"), "");
}

TEST(PythonJoinSplit, JoinsThePiecesWithSingleSpaces) {
  EXPECT_EQ(join_python_split("  a\u00A0 b\tc\u3000 "), "a b c");
  EXPECT_EQ(join_python_split("\u2028"), "");
}

TEST(PythonRemoveWhitespace, JoinsThePieces) { EXPECT_EQ(remove_python_whitespace(" a b\u00A0c\u2009d "), "abcd"); }

TEST(PythonLower, AsciiAndLatin) {
  EXPECT_EQ(python_lower("Hello, World 42!"), "hello, world 42!");
  EXPECT_EQ(python_lower("\u00C4\u00D6\u00DC\u00C9\u00C0 Stra\u00DFe"), "\u00E4\u00F6\u00FC\u00E9\u00E0 stra\u00DFe");
  EXPECT_EQ(python_lower("\u01C4\u01C5"), "\u01C6\u01C6");  // DŽ and Dž both lowercase to dž
}

// CPython Lib/test/test_str.py, test_lower.
TEST(PythonLower, CPythonTestSuite) {
  EXPECT_EQ(python_lower("\U00010427\U00010427"), "\U0001044F\U0001044F");
  EXPECT_EQ(python_lower("\U00010427\U0001044F"), "\U0001044F\U0001044F");
  EXPECT_EQ(python_lower("X\U00010427x\U0001044F"), "x\U0001044Fx\U0001044F");
  EXPECT_EQ(python_lower("\uFB01"), "\uFB01");
  EXPECT_EQ(python_lower("\u0130"), "\u0069\u0307");
  EXPECT_EQ(python_lower("\u03A3"), "\u03C3");
  EXPECT_EQ(python_lower("\u0345\u03A3"), "\u0345\u03C3");
  EXPECT_EQ(python_lower("A\u0345\u03A3"), "a\u0345\u03C2");
  EXPECT_EQ(python_lower("A\u0345\u03A3a"), "a\u0345\u03C3a");
  EXPECT_EQ(python_lower("A\u03A3\u0345"), "a\u03C2\u0345");
  EXPECT_EQ(python_lower("\u03A3\u0345 "), "\u03C3\u0345 ");
  EXPECT_EQ(python_lower("\U0008FFFE"), "\U0008FFFE");
  EXPECT_EQ(python_lower("\u2177"), "\u2177");
}

// Hand-worked from the Final_Sigma rule: a capital sigma after a cased letter and not before one
// becomes final sigma; "ΟΔΥΣΣΕΥΣ" ends in one and has two ordinary ones in the middle.
TEST(PythonLower, FinalSigmaInWords) {
  EXPECT_EQ(python_lower("\u039F\u0394\u03A5\u03A3\u03A3\u0395\u03A5\u03A3"),
            "\u03BF\u03B4\u03C5\u03C3\u03C3\u03B5\u03C5\u03C2");
  EXPECT_EQ(python_lower("\u03A3\u0391\u03A3 \u03A3"), "\u03C3\u03B1\u03C2 \u03C3");
}

TEST(PythonLower, KeepsBytesItCannotDecode) {
  EXPECT_EQ(python_lower("A\xFF"
                         "B"),
            "a\xFF"
            "b");
  EXPECT_EQ(python_lower("\xC3\xC9"
                         "A"),
            "\xC3\xC9"
            "a");  // Latin-1 "ÃÉ" is not UTF-8: left alone
}

}  // namespace
}  // namespace attn::eval
