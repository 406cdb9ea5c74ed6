// Reading a gold standard for scoring, and the line counts it must share with what it scores.
#include "inspect/alignment_gold.h"

#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/error.h"

namespace attn::inspect {
namespace {

class AlignmentGold : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("alignment_gold"); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  static std::string problem(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
};

TEST_F(AlignmentGold, SameLines) {
  EXPECT_EQ(problem([] { check_same_lines("a", 2, "b", 2); }), "");
  EXPECT_EQ(problem([] { check_same_lines("s.txt", 3, "t.txt", 2); }),
            "s.txt has 3 lines but t.txt has 2; they must have one line per sentence");
}

// Line 1: sure 0-0, possible 1?1 (so P = {0-0, 1-1}); line 2: sure 0-0. Tagged: line 1 tags source
// 0 and target 0 and 1.
TEST_F(AlignmentGold, ReadsLinksAndTaggedWords) {
  const std::string path = write("gold.txt", "0-0 1?1\n0-0\n");
  const Gold gold = read_gold(path, write("gold.tagged", "0 ||| 0 1\n0 ||| 0\n"));
  EXPECT_EQ(gold.path, path);
  ASSERT_EQ(gold.links.size(), 2u);
  EXPECT_EQ(gold.links[0].sure, (Alignment{{0, 0}}));
  EXPECT_EQ(gold.links[0].possible, (Alignment{{0, 0}, {1, 1}}));
  ASSERT_EQ(gold.tagged.size(), 2u);
  EXPECT_EQ(gold.tagged[0].source, (std::vector<int>{0}));
  EXPECT_EQ(gold.tagged[0].target, (std::vector<int>{0, 1}));
  EXPECT_TRUE(read_gold(path, "").tagged.empty());
  const std::string one_line = write("one.tagged", "0 ||| 0\n");
  EXPECT_EQ(problem([&] { read_gold(path, one_line); }),
            path + " has 2 lines but " + one_line + " has 1; they must have one line per sentence");
}

// Predicted 1-0 and 1-1 on line 1, 0-0 on line 2 against the gold above: |A| = 3, |S| = 2,
// |A∩S| = 1 (0-0 of line 2), |A∩P| = 2 (and 1-1).
TEST_F(AlignmentGold, ScoresPredictedLinksOfEitherKind) {
  const Gold gold = read_gold(write("gold.txt", "0-0 1?1\n0-0\n"), "");
  const std::string predicted_path = write("w.txt", "1-0 1?1\n0-0\n");
  const std::vector<Alignment> predicted = read_predicted_alignments(predicted_path);
  EXPECT_EQ(predicted, (std::vector<Alignment>{{{1, 0}, {1, 1}}, {{0, 0}}}));
  const AlignmentScore s = score_against_gold(gold, predicted, predicted_path);
  EXPECT_EQ(s.predicted, 3u);
  EXPECT_EQ(s.sure, 2u);
  EXPECT_EQ(s.predicted_in_sure, 1u);
  EXPECT_EQ(s.predicted_in_possible, 2u);
  EXPECT_EQ(problem([&] { score_against_gold(gold, {{}}, "w1.txt"); }),
            gold.path + " has 2 lines but w1.txt has 1; they must have one line per sentence");
}

}  // namespace
}  // namespace attn::inspect
