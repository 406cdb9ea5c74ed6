// The split rule against SHA-1 values computed by hand with `printf 'Gen.1.1' | sha1sum`.
#include "data/corpus_split.h"

#include <gtest/gtest.h>

namespace attn::data {
namespace {

TEST(CorpusSplit, HashIsTheFirstEightHexDigitsOfSha1) {
  EXPECT_EQ(split_hash("Gen.1.1"), 0x52c41bd1u);    // sha1 52c41bd1...
  EXPECT_EQ(split_hash("1Cor.13.4"), 0x4aaf2959u);  // sha1 4aaf2959...
  EXPECT_EQ(split_hash("Rev.22.21"), 0x41c176dau);  // sha1 41c176da...
  EXPECT_EQ(split_hash("Gen.1.2"), 0x46152cd2u);    // sha1 46152cd2...
  EXPECT_EQ(split_hash("Gen.1.3"), 0xe85213a3u);    // sha1 e85213a3...
}

TEST(CorpusSplit, ResidueModulo30ChoosesTheSplit) {
  EXPECT_EQ(split_of_verse("Gen.1.1"), CorpusSplit::train);    // 1388583889 % 30 == 19
  EXPECT_EQ(split_of_verse("Rev.22.21"), CorpusSplit::train);  // 1103197914 % 30 == 24
  EXPECT_EQ(split_of_verse("Gen.1.2"), CorpusSplit::test);     // 1175792850 % 30 == 0
  EXPECT_EQ(split_of_verse("John.3.17"), CorpusSplit::test);   // 0xf77a2a90 = 4151978640 % 30 == 0
  EXPECT_EQ(split_of_verse("Gen.1.3"), CorpusSplit::dev);      // 3897693091 % 30 == 1
  EXPECT_EQ(split_of_verse("Matt.2.9"), CorpusSplit::dev);     // 0x92604aa5 = 2455784101 % 30 == 1
}

TEST(CorpusSplit, NamesAreFileStems) {
  EXPECT_EQ(split_name(CorpusSplit::train), "train");
  EXPECT_EQ(split_name(CorpusSplit::dev), "dev");
  EXPECT_EQ(split_name(CorpusSplit::test), "test");
}

}  // namespace
}  // namespace attn::data
