// `attn vocab encode` and `attn vocab decode` without the binary: words split at spaces as worked
// by hand, lines of ids and pieces as the vocabulary gives them, exact round trips, and errors
// that name the line.
#include "data/token_lines.h"

#include <sstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "data/data_test_support.h"

namespace attn::data {
namespace {

class TokenLinesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(testing::fresh_temp_dir("token_lines"));
    vocabulary_ = new Vocabulary(Vocabulary::load(testing::train_fixture_vocabulary(*dir_, 400)));
  }
  static void TearDownTestSuite() {
    delete vocabulary_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    return text;
  }
  static std::filesystem::path* dir_;
  static Vocabulary* vocabulary_;
};

std::filesystem::path* TokenLinesTest::dir_ = nullptr;
Vocabulary* TokenLinesTest::vocabulary_ = nullptr;

TEST(SplitAtSpaces, RunsOfSpacesAndSpacesAtTheEndsGiveNoEmptyWords) {
  EXPECT_EQ(split_at_spaces("  12 7  3 "), (std::vector<std::string>{"12", "7", "3"}));
  EXPECT_EQ(split_at_spaces("\xe2\x96\x81God"), (std::vector<std::string>{"\xe2\x96\x81God"}));
  EXPECT_TRUE(split_at_spaces("").empty());
  EXPECT_TRUE(split_at_spaces("   ").empty());
}

TEST_F(TokenLinesTest, LinesOfIdsAndPiecesAreTheVocabularysSeparatedBySpaces) {
  const std::string text = "And God said, Let there be light";
  std::vector<std::string> ids;
  for (std::int32_t id : vocabulary_->encode(text)) ids.push_back(std::to_string(id));
  ASSERT_GT(ids.size(), 1u);
  EXPECT_EQ(encode_line(*vocabulary_, text, false), joined(ids));
  EXPECT_EQ(encode_line(*vocabulary_, text, true), joined(vocabulary_->encode_pieces(text)));
  EXPECT_EQ(encode_line(*vocabulary_, "", false), "");
  // Back, however the words are spaced.
  EXPECT_EQ(decode_line(*vocabulary_, "  " + joined(ids) + "  ", false), text);
  EXPECT_EQ(decode_line(*vocabulary_, encode_line(*vocabulary_, text, true), true), text);
  // BOS and EOS (ids 2 and 3) decode to nothing.
  EXPECT_EQ(decode_line(*vocabulary_, "2 3", false), "");
}

TEST_F(TokenLinesTest, WordsThatAreNoIdsAreNamed) {
  EXPECT_EQ(testing::message_of([] { decode_line(*vocabulary_, "12 x7", false); }), "\"x7\" is not a token id");
  EXPECT_EQ(testing::message_of([] { decode_line(*vocabulary_, "12 7x", false); }), "\"7x\" is not a token id");
  EXPECT_EQ(testing::message_of([] { decode_line(*vocabulary_, "99999999999", false); }),
            "\"99999999999\" is not a token id");
}

TEST_F(TokenLinesTest, StreamsWriteLineByLineAndNameTheLineInErrors) {
  std::istringstream in("God\r\nlight\n");
  std::ostringstream out;
  encode_lines(*vocabulary_, in, "<stdin>", out, false);
  EXPECT_EQ(out.str(),
            encode_line(*vocabulary_, "God", false) + "\n" + encode_line(*vocabulary_, "light", false) + "\n");

  std::istringstream decoded(out.str());
  std::ostringstream text;
  decode_lines(*vocabulary_, decoded, "<stdin>", text, false);
  EXPECT_EQ(text.str(), "God\nlight\n");

  std::istringstream bad_text("God\nba\xff\n");
  std::ostringstream partial;
  EXPECT_EQ(testing::message_of([&] { encode_lines(*vocabulary_, bad_text, "<stdin>", partial, false); }),
            "<stdin>:2: invalid UTF-8 at byte 3 of the line");
  EXPECT_EQ(partial.str(), encode_line(*vocabulary_, "God", false) + "\n");

  std::istringstream bad_ids("4\n5 x\n");
  std::ostringstream ignored;
  EXPECT_EQ(testing::message_of([&] { decode_lines(*vocabulary_, bad_ids, "<stdin>", ignored, false); }),
            "<stdin>:2: \"x\" is not a token id");
}

}  // namespace
}  // namespace attn::data
