// The baselines of `attn align --baseline`: the diagonal worked by hand, and IBM Model 1 where the
// sentences leave only one consistent reading.
#include "inspect/alignment_baseline.h"

#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "core/error.h"

namespace attn::inspect {
namespace {

class AlignmentBaseline : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("alignment_baseline"); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  static std::string problem(const AlignmentRequest& request) {
    try {
      baseline_alignments(request);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
};

TEST_F(AlignmentBaseline, ReadsWordsSplitAtSpacesAndTabs) {
  EXPECT_EQ(read_words(write("s.txt", "a  b\tc\n\nd\n")), (Words{{"a", "b", "c"}, {}, {"d"}}));
}

// S = 3, T = 3: target j to round((j + 0.5) − 0.5) = j. S = 1, T = 2: both to 0. S = 2, T = 1:
// round(0.5·2 − 0.5) = round(0.5) = 1 (halves away from zero).
TEST_F(AlignmentBaseline, Diagonal) {
  EXPECT_EQ(diagonal_alignments({{"a", "b", "c"}, {"x"}, {"p", "q"}}, {{"1", "2", "3"}, {"y", "z"}, {"r"}}),
            (std::vector<Alignment>{{{0, 0}, {1, 1}, {2, 2}}, {{0, 0}, {0, 1}}, {{1, 0}}}));
}

// "la" is in both pairs as "the" is, so EM gives "the" to "la" and leaves "maison"/"fleur" to
// "house"/"flower" (the classic example of Model 1 learning from co-occurrence alone).
TEST_F(AlignmentBaseline, Ibm1LearnsFromTheSentencesToAlign) {
  EXPECT_EQ(ibm1_alignments({{"la", "maison"}, {"la", "fleur"}}, {{"the", "house"}, {"the", "flower"}}, {}, {}, 5),
            (std::vector<Alignment>{{{0, 0}, {1, 1}}, {{0, 0}, {1, 1}}}));
}

// "a b" → "y x" alone is a tie; the training pairs a → x and b → y settle it: x (target 1) to a
// (source 0), y (target 0) to b (source 1).
TEST_F(AlignmentBaseline, Ibm1LearnsFromTheTrainingText) {
  EXPECT_EQ(ibm1_alignments({{"a", "b"}}, {{"y", "x"}}, {{"a"}, {"b"}}, {{"x"}, {"y"}}, 5),
            (std::vector<Alignment>{{{0, 1}, {1, 0}}}));
}

TEST_F(AlignmentBaseline, FromTheRequestsFiles) {
  AlignmentRequest r;
  r.baseline = "ibm1";
  r.source = write("s.txt", "a b\n");
  r.target = write("t.txt", "y x\n");
  r.train_source = write("ts.txt", "a\nb\n");
  r.train_target = write("tt.txt", "x\ny\n");
  EXPECT_EQ(baseline_alignments(r), (std::vector<Alignment>{{{0, 1}, {1, 0}}}));
  r.baseline = "diagonal";
  EXPECT_EQ(baseline_alignments(r), (std::vector<Alignment>{{{0, 0}, {1, 1}}}));
}

TEST_F(AlignmentBaseline, Errors) {
  AlignmentRequest r;
  r.baseline = "ibm1";
  r.source = write("s.txt", "a b\nc\n");
  EXPECT_EQ(problem(r), "--baseline needs --source and --target");
  r.target = write("t.txt", "x y\n");
  EXPECT_EQ(problem(r), r.source + " has 2 lines but " + r.target + " has 1; they must have one line per sentence");
  r.target = write("t.txt", "x y\nz\n");
  r.train_source = write("ts.txt", "a\n");
  EXPECT_EQ(problem(r), "--train-source and --train-target go together");
  r.train_target = write("tt.txt", "x\ny\n");
  EXPECT_EQ(problem(r),
            r.train_source + " has 1 lines but " + r.train_target + " has 2; they must have one line per sentence");
  r.baseline = "fast_align";
  EXPECT_EQ(problem(r), "--baseline: unknown baseline 'fast_align' (known: diagonal, ibm1)");
}

}  // namespace
}  // namespace attn::inspect
