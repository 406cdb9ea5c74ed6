// The Pharaoh "i-j" / "i?j" format and ".tagged" lines.
#include "inspect/pharaoh.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace attn::inspect {
namespace {

std::string error_of(const std::string& text, bool tagged = false) {
  try {
    if (tagged) {
      parse_tagged_line(text, "g.txt", 4);
    } else {
      parse_pharaoh_line(text, "g.txt", 4);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Pharaoh, FormatsSortedSourceFirst) {
  EXPECT_EQ(format_pharaoh({{2, 0}, {0, 1}, {0, 0}, {2, 0}}), "0-0 0-1 2-0");
  EXPECT_EQ(format_pharaoh({}), "");
}

TEST(Pharaoh, SureAndPossibleLinks) {
  const GoldAlignment gold = parse_pharaoh_line("1?2 0-0  1-1\t", "g.txt", 1);
  EXPECT_EQ(gold.sure, (Alignment{{0, 0}, {1, 1}}));
  EXPECT_EQ(gold.possible, (Alignment{{0, 0}, {1, 1}, {1, 2}}));
  EXPECT_TRUE(parse_pharaoh_line("", "g.txt", 1).possible.empty());
}

TEST(Pharaoh, BadTokensNameFileLineAndToken) {
  EXPECT_EQ(error_of("0-0 1:2").rfind("g.txt:4: bad link '1:2' (links are i-j for sure or i?j for possible", 0), 0u);
  for (const char* bad : {"0-", "-1", "a-1", "1-2-3", "+1-2", "1-99999999999"}) {
    EXPECT_EQ(error_of(bad).rfind("g.txt:4: bad link '" + std::string(bad) + "'", 0), 0u) << bad;
  }
}

TEST(Pharaoh, TaggedLines) {
  const TaggedWords tagged = parse_tagged_line("4 0 1 ||| 0 2", "g.txt", 1);
  EXPECT_EQ(tagged.source, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(tagged.target, (std::vector<int>{0, 2}));
  const TaggedWords none = parse_tagged_line(" ||| ", "g.txt", 1);
  EXPECT_TRUE(none.source.empty() && none.target.empty());
  EXPECT_EQ(error_of("0 1 2", true).rfind("g.txt:4: a tagged line", 0), 0u);
  EXPECT_EQ(error_of("0 ||| 1 ||| 2", true).rfind("g.txt:4: a tagged line", 0), 0u);
  EXPECT_EQ(error_of("0 x ||| 1", true), "g.txt:4: bad word index 'x' (0-based, digits only)");
}

}  // namespace
}  // namespace attn::inspect
