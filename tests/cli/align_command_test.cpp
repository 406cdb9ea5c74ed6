// `attn align` end to end: runs the built binary on small hand-made files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/run_attn.h"
#include "common/temp_dir.h"

namespace attn::inspect {
namespace {

namespace fs = std::filesystem;

using testing::run_attn;
using testing::RunResult;

// Two records, two layers: layer 0 has heads 0 and 1, layer 1 has head 0.
// Record 1, "la casa" (▁la ▁ca sa </s>) → "the house" (▁the ▁house </s>), word-level rows (source
// pieces ▁ca + sa summed, </s> dropped):
//   layer 0 head 0: the [0.5, 0.5] (tie → la), house [0, 1] → casa       "0-0 1-1"
//   layer 0 head 1: the [0, 1] → casa, house [1, 0] → la                 "0-1 1-0"
//   layer 0 mean:   the [0.25, 0.75] → casa, house [0.5, 0.5] → la       "0-1 1-0"
//   layer 1 head 0: the [1, 0] → la, house [0, 1] → casa                 "0-0 1-1"
// Record 2, "sí" → "yes": every head links "0-0".
const char* kRecords =
    R"({"line":1,"source":"la casa","target":"the house","source_pieces":["▁la","▁ca","sa","</s>"],)"
    R"("target_pieces":["▁the","▁house","</s>"],"log_prob":-1,"score":-1,"attention":[)"
    R"({"kind":"cross","layer":0,"head":0,"weights":[[0.5,0.25,0.25,0],[0,0.5,0.5,0],[0,0,0,1]]},)"
    R"({"kind":"cross","layer":0,"head":1,"weights":[[0,1,0,0],[1,0,0,0],[0,0,0,1]]},)"
    R"({"kind":"cross","layer":1,"head":0,"weights":[[1,0,0,0],[0,0.25,0.75,0],[0,0,0,1]]}]})"
    "\n"
    R"({"line":2,"source":"sí","target":"yes","source_pieces":["▁sí","</s>"],"target_pieces":["▁yes","</s>"],)"
    R"("log_prob":-1,"score":-1,"attention":[{"kind":"cross","layer":0,"head":0,"weights":[[1,0],[0,1]]},)"
    R"({"kind":"cross","layer":0,"head":1,"weights":[[1,0],[0,1]]},)"
    R"({"kind":"cross","layer":1,"head":0,"weights":[[1,0],[0,1]]}]})"
    "\n";

class AlignCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = attn::testing::fresh_temp_dir("align_command");
    write("a.jsonl", kRecords);
    write("gold.txt", "0-0 1-1\n0-0\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return path(name);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path dir_;
};

// Two layers of two heads each, "la casa blanca" (▁la ▁ca sa ▁blanca </s>) → "the white house"
// (▁the ▁white ▁house </s>). Word-level rows (▁ca + sa summed, </s> dropped) over [la, casa,
// blanca], each target word linked to its heaviest source word (links source-target, sorted):
//                    the                white          house
//   layer 0 head 0:  [1, 0, 0] → la     [0, 1, 0] → casa  [0, 0, 1] → blanca   "0-0 1-1 2-2"
//   layer 0 head 1:  [0, 0, 1] → blanca [0, 1, 0] → casa  [1, 0, 0] → la       "0-2 1-1 2-0"
//   layer 0 mean:    [.5, 0, .5] → la   [0, 1, 0] → casa  [.5, 0, .5] → la     "0-0 0-2 1-1"
//   layer 1 head 0:  [.6, .4, 0] → la   [0, 0, 1] → blanca [0, .4, .6] → blanca "0-0 2-1 2-2"
//   layer 1 head 1:  [0, .4, .6] → blanca [0, 0, 1] → blanca [.6, .4, 0] → la   "0-2 2-0 2-1"
//   layer 1 mean:    [.3, .4, .3] → casa [0, 0, 1] → blanca [.3, .4, .3] → casa "1-0 1-2 2-1"
// The mean of the last layer links "the" and "house" to "casa", which no single head does (nor
// layer 0's mean, nor the mean of all four heads, "0-0 0-2 1-1"); and only with ▁ca and sa summed
// (each 0.2 < 0.3) does "casa" win. Record 2, "sí" → "yes": every head "0-0".
const char* kTwoHeadsInTheLastLayer =
    R"({"line":1,"source":"la casa blanca","target":"the white house",)"
    R"("source_pieces":["▁la","▁ca","sa","▁blanca","</s>"],"target_pieces":["▁the","▁white","▁house","</s>"],)"
    R"("log_prob":-1,"score":-1,"attention":[)"
    R"({"kind":"cross","layer":0,"head":0,"weights":[[1,0,0,0,0],[0,0.5,0.5,0,0],[0,0,0,1,0],[0,0,0,0,1]]},)"
    R"({"kind":"cross","layer":0,"head":1,"weights":[[0,0,0,1,0],[0,0.5,0.5,0,0],[1,0,0,0,0],[0,0,0,0,1]]},)"
    R"({"kind":"cross","layer":1,"head":0,"weights":[[0.6,0.2,0.2,0,0],[0,0,0,1,0],[0,0.2,0.2,0.6,0],[0,0,0,0,1]]},)"
    R"({"kind":"cross","layer":1,"head":1,"weights":[[0,0.2,0.2,0.6,0],[0,0,0,1,0],[0.6,0.2,0.2,0,0],[0,0,0,0,1]]}]})"
    "\n"
    R"({"line":2,"source":"sí","target":"yes","source_pieces":["▁sí","</s>"],"target_pieces":["▁yes","</s>"],)"
    R"("log_prob":-1,"score":-1,"attention":[{"kind":"cross","layer":0,"head":0,"weights":[[1,0],[0,1]]},)"
    R"({"kind":"cross","layer":0,"head":1,"weights":[[1,0],[0,1]]},)"
    R"({"kind":"cross","layer":1,"head":0,"weights":[[1,0],[0,1]]},)"
    R"({"kind":"cross","layer":1,"head":1,"weights":[[1,0],[0,1]]}]})"
    "\n";

// No --layer, no --head: the mean of the last layer's heads (worked out above), not a head of its
// own, nor layer 0. The single heads, asked for, are each what the table says.
TEST_F(AlignCommand, DefaultsToTheMeanOfTheLastLayer) {
  const std::string records = write("two_heads.jsonl", kTwoHeadsInTheLastLayer);
  RunResult result = run_attn("align --attention " + records);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "1-0 1-2 2-1\n0-0\n");
  for (const auto& [choice, links] :
       std::vector<std::pair<std::string, std::string>>{{"--layer 0 --head 0", "0-0 1-1 2-2"},
                                                        {"--layer 0 --head 1", "0-2 1-1 2-0"},
                                                        {"--layer 0", "0-0 0-2 1-1"},
                                                        {"--layer 1 --head 0", "0-0 2-1 2-2"},
                                                        {"--layer 1 --head 1", "0-2 2-0 2-1"},
                                                        {"--layer 1 --head mean", "1-0 1-2 2-1"}}) {
    result = run_attn("align --attention " + records + " " + choice);
    EXPECT_EQ(result.exit_code, 0) << choice << ": " << result.output;
    EXPECT_EQ(result.output, links + "\n0-0\n") << choice;
  }
}

TEST_F(AlignCommand, ChosenLayerAndHead) {
  RunResult result = run_attn("align --attention " + path("a.jsonl") + " --layer 1 --head 0");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "0-0 1-1\n0-0\n");
  result = run_attn("align --attention " + path("a.jsonl") + " --layer 0 --head 1 -o " + path("out.txt"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "");
  EXPECT_EQ(read("out.txt"), "0-1 1-0\n0-0\n");
}

// w.txt vs gold: |A| = 3, |S| = |P| = 3, |A∩S| = |A∩P| = 1 (only 0-0 of line 2):
//   precision = recall = 1/3 = 33.33%, AER = 1 − (1 + 1)/(3 + 3) = 66.67%.
TEST_F(AlignCommand, ScoresAlignmentFiles) {
  write("w.txt", "0-1 1-0\n0-0\n");
  const RunResult result =
      run_attn("align --gold " + path("gold.txt") + " --alignment " + path("w.txt") + " " + path("gold.txt"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "precision  recall     AER  alignment\n"
            "    33.33   33.33   66.67  " +
                path("w.txt") +
                "\n"
                "   100.00  100.00    0.00  " +
                path("gold.txt") + "\n");
}

// The tagged file leaves target word 1 of line 1 unjudged: w.txt keeps 1-0 and 0-0 (line 2), one of
// them right: |A| = 2, |S| = 3, precision 1/2, recall 1/3, AER = 1 − 2/5 = 60%.
TEST_F(AlignCommand, TaggedWordsRestrictTheScoredLinks) {
  write("w.txt", "0-1 1-0\n0-0\n");
  write("gold.tagged", "0 1 ||| 0\n0 ||| 0\n");
  const RunResult result = run_attn("align --gold " + path("gold.txt") + " --gold-tagged " + path("gold.tagged") +
                                    " --alignment " + path("w.txt") + " --json");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("\"precision\": 50.0,"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("\"aer\": 60.0,"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("\"predicted\": 2,"), std::string::npos) << result.output;
}

TEST_F(AlignCommand, SweepMarksTheBestHeadOfEachLayer) {
  const RunResult result =
      run_attn("align --attention " + path("a.jsonl") + " --gold " + path("gold.txt") + " --sweep");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "layer  head  precision  recall     AER\n"
            "    0     0     100.00  100.00    0.00  *\n"
            "    0     1      33.33   33.33   66.67\n"
            "    0  mean      33.33   33.33   66.67\n"
            "    1     0     100.00  100.00    0.00  *\n"
            "    1  mean     100.00  100.00    0.00\n"
            "* the lowest AER of the layer\n");
}

// S = 3, T = 3: word j to round((j + 0.5) − 0.5) = j; S = 1, T = 2: both to 0.
TEST_F(AlignCommand, DiagonalBaseline) {
  write("s.txt", "a b c\nx\n");
  write("t.txt", "1 2 3\ny z\n");
  const RunResult result =
      run_attn("align --baseline diagonal --source " + path("s.txt") + " --target " + path("t.txt"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "0-0 1-1 2-2\n0-0 0-1\n");
}

TEST_F(AlignCommand, Ibm1Baseline) {
  write("s.txt", "la maison\nla fleur\n");
  write("t.txt", "the house\nthe flower\n");
  const RunResult result =
      run_attn("align --baseline ibm1 --source " + path("s.txt") + " --target " + path("t.txt") + " --iterations 5");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "0-0 1-1\n0-0 1-1\n");
}

TEST_F(AlignCommand, NotJsonIsAnErrorNamingFileAndLine) {
  write("bad.jsonl", std::string(kRecords) + "not json\n");
  const RunResult result = run_attn("align --attention " + path("bad.jsonl"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(path("bad.jsonl") + ":3: not JSON"), std::string::npos) << result.output;
}

TEST_F(AlignCommand, LayerOutOfRange) {
  const RunResult result = run_attn("align --attention " + path("a.jsonl") + " --layer 2");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(path("a.jsonl") + ":1: no cross-attention layer 2 (the record has 2 layers"),
            std::string::npos)
      << result.output;
}

TEST_F(AlignCommand, MismatchedLineCounts) {
  write("g3.txt", "0-0\n0-0\n0-0\n");
  RunResult result = run_attn("align --attention " + path("a.jsonl") + " --gold " + path("g3.txt"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(path("g3.txt") + " has 3 lines but " + path("a.jsonl") + " has 2"), std::string::npos)
      << result.output;
  write("g.tagged", "0 ||| 0\n");
  result = run_attn("align --gold " + path("gold.txt") + " --gold-tagged " + path("g.tagged") + " --alignment " +
                    path("gold.txt"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(path("gold.txt") + " has 2 lines but " + path("g.tagged") + " has 1"), std::string::npos)
      << result.output;
}

TEST_F(AlignCommand, BadGoldTokenNamesFileAndLine) {
  write("g.txt", "0-0 1-1\n0-x\n");
  const RunResult result = run_attn("align --gold " + path("g.txt") + " --alignment " + path("gold.txt"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(path("g.txt") + ":2: bad link '0-x'"), std::string::npos) << result.output;
}

TEST_F(AlignCommand, NeedsOneInput) {
  EXPECT_EQ(run_attn("align").exit_code, 1);
  EXPECT_EQ(run_attn("align --attention " + path("a.jsonl") + " --baseline diagonal").exit_code, 1);
}

}  // namespace
}  // namespace attn::inspect
