// `attn report` end to end: a run folder written by hand (its train.jsonl, config.json and a
// scores file) gives a report whose figures are the ones put in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/run_attn.h"
#include "common/temp_dir.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// `attn ARGUMENTS`: its exit code, and what it printed in `output`.
int run(const std::string& arguments, std::string& output) {
  const testing::RunResult r = testing::run_attn(arguments);
  output = r.output;
  return r.exit_code;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The records are written as the trainer writes them (src/train/trainer.cpp, validation.cpp): a
// progress record's "loss", "ppl", "lr", "tokens_per_second", "target_tokens", "elapsed_seconds";
// a validation's "loss" (label-smoothed), "cross_entropy", "ppl", "tokens" (dev tokens), "seconds"
// (its own duration), "bleu", "best", "elapsed_seconds". Every figure differs from the others, so
// a report that read a figure under another key (or one the trainer never writes) prints another
// number, or fails.
TEST(ReportCommand, TablesCurveAndBestValidationComeFromTheRunFiles) {
  const auto dir = testing::fresh_temp_dir("report");
  write(dir / "train" / "config.json", R"({"d_model": 256})");
  write(
      dir / "train" / "train.jsonl",
      R"({"type":"train","step":50,"epoch":1,"loss":8.5,"ppl":4000,"lr":0.0001,"tokens_per_second":3000,"target_tokens":180000,"elapsed_seconds":60})"
      "\n"
      R"({"loss":5.5,"cross_entropy":2.0,"ppl":7.38905609893065,"tokens":1234,"seconds":4.5,"bleu":12.5,"type":"valid","step":100,"best":true,"elapsed_seconds":130})"
      "\n"
      R"({"type":"train","step":100,"epoch":2,"loss":6.0,"ppl":300,"lr":0.0002,"tokens_per_second":5000,"target_tokens":360000,"elapsed_seconds":3725})"
      "\n"
      R"({"loss":5.9,"cross_entropy":2.5,"ppl":12.182493960703473,"tokens":1234,"seconds":5.5,"bleu":11.0,"type":"valid","step":150,"best":false,"elapsed_seconds":3800})"
      "\n");
  write(
      dir / "scores.json",
      R"([{"name":"BLEU","score":33.004,"signature":"nrefs:1|sig"},{"name":"chrF2","score":53.449,"signature":"nrefs:1|chrf"}])");
  std::string out;
  ASSERT_EQ(run("report --run " + dir.string() + " --result 'attn|KJV→es=" + (dir / "scores.json").string() + "'", out),
            0)
      << out;
  const std::string md = read(dir / "report.md");
  EXPECT_NE(md.find("| attn | KJV→es | 33.00 | 53.45 |"), std::string::npos) << md;
  EXPECT_NE(md.find("`nrefs:1|sig`"), std::string::npos) << md;
  EXPECT_NE(md.find("| updates | 100 (2 epochs) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| training time | 1:02:05 |"), std::string::npos) << md;              // 3725 s
  EXPECT_NE(md.find("| target tokens seen | 360000 |"), std::string::npos) << md;          // not the dev's 1234
  EXPECT_NE(md.find("| training speed | 5000 target tokens/s"), std::string::npos) << md;  // median of 3000, 5000
  // e^2: the lowest cross-entropy (step 100), as its "ppl" says (not its label-smoothed loss, 5.5).
  EXPECT_NE(md.find("| best dev perplexity | 7.39 per subword token (cross-entropy 2.0000, step 100) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| best dev BLEU (greedy, during training) | 12.50 |"), std::string::npos) << md;
  const std::string svg = read(dir / "learning_curve.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(ReportCommand, ARunShorterThanOneLogIntervalStillGetsAReport) {
  const auto dir = testing::fresh_temp_dir("report_empty");
  write(dir / "train" / "config.json", "{}");
  write(dir / "train" / "train.jsonl", "");
  std::string out;
  ASSERT_EQ(run("report --run " + dir.string(), out), 0) << out;
  EXPECT_NE(read(dir / "report.md").find("No progress records"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "learning_curve.svg"));
}

TEST(ReportCommand, BadScoresFileIsNamed) {
  const auto dir = testing::fresh_temp_dir("report_bad");
  write(dir / "train" / "config.json", "{}");
  write(dir / "train" / "train.jsonl", "");
  write(dir / "scores.json", "[{not json");
  std::string out;
  EXPECT_NE(run("report --run " + dir.string() + " --result 'x|y=" + (dir / "scores.json").string() + "'", out), 0);
  EXPECT_NE(out.find((dir / "scores.json").string()), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "report.md"));
}

// A torn or foreign line in train.jsonl used to be skipped without a word, and a record without
// its figures ended in a JSON library exception: both name the file and line now.
TEST(ReportCommand, BadTrainingLogLinesAreNamed) {
  const auto dir = testing::fresh_temp_dir("report_bad_log");
  write(dir / "train" / "config.json", "{}");
  const std::string good =
      R"({"type":"train","step":50,"epoch":1,"loss":8.5,"tokens_per_second":3000,"target_tokens":1,"elapsed_seconds":60})";
  const auto log = (dir / "train" / "train.jsonl").string();
  for (const auto& [second_line, problem] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type":"train","step":60,"lo)", ":2: not a JSON object"},
           {R"({"type":"valid","step":60})", ":2: \"cross_entropy\" must be a number"},
           {R"({"type":"train","step":"60","loss":1,"tokens_per_second":1,"elapsed_seconds":1})",
            ":2: \"step\" must be a number"},
           {R"({"step":60})", ":2: \"type\" must be \"train\" or \"valid\""},
           {R"({"type":"train","step":60,"epoch":"1","loss":1,"tokens_per_second":1,"elapsed_seconds":1})",
            ":2: \"epoch\" must be a number"}}) {
    write(dir / "train" / "train.jsonl", good + "\n" + second_line + "\n");
    std::string out;
    EXPECT_NE(run("report --run " + dir.string(), out), 0) << out;
    EXPECT_NE(out.find(log + problem), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir / "report.md")) << second_line;
  }
  // A run killed while writing a record leaves a last line without its end: that one is left out,
  // and the report says so.
  write(dir / "train" / "train.jsonl", good + "\n" + R"({"type":"train","step":60,"lo)");
  std::string out;
  ASSERT_EQ(run("report --run " + dir.string(), out), 0) << out;
  const std::string md = read(dir / "report.md");
  EXPECT_NE(md.find("| updates | 50 (1 epochs) |"), std::string::npos) << md;
  EXPECT_NE(md.find("is an incomplete record (the run stopped while writing it) and is left out"), std::string::npos)
      << md;
}

}  // namespace
}  // namespace attn
