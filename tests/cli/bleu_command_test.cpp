// `attn bleu` end to end: runs the built binary on small files and checks what it prints.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "eval/sacrebleu_format.h"

namespace attn::eval {
namespace {

namespace fs = std::filesystem;

using testing::run_attn;
using testing::RunResult;

class BleuCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = attn::testing::fresh_temp_dir("bleu_command");
    // sacreBLEU's README example.
    write("hyp.txt", "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n");
    write("ref1.txt", "The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n");
    write("ref2.txt", "The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return path(name);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

const std::string kVersion(kSacrebleuVersion);

// Expected lines: sacreBLEU README (BLEU 48.53 line, chrF2 = 59.73, both signatures).
TEST_F(BleuCommand, PrintsBothScoresAndSignatures) {
  const RunResult result = run_attn("bleu " + path("hyp.txt") + " " + path("ref1.txt") + " " + path("ref2.txt"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n"
            "chrF2 = 59.73\n"
            "BLEU signature: nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:" +
                kVersion +
                "\n"
                "chrF2 signature: nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" +
                kVersion + "\n");
}

// sacreBLEU's command line rstrips every line, so trailing blanks (and CRLF endings) do not count.
TEST_F(BleuCommand, IgnoresTrailingWhitespaceAndCrlf) {
  write("hyp_crlf.txt", "The dog bit the man. \r\nIt wasn't surprising.\u00A0\r\nThe man had just bitten him.\t\r\n");
  const RunResult result =
      run_attn("bleu --metrics bleu " + path("hyp_crlf.txt") + " " + path("ref1.txt") + " " + path("ref2.txt"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.substr(0, 13), "BLEU = 48.53 ");
}

TEST_F(BleuCommand, MetricsLowercaseWidthAndChrfPlusPlus) {
  RunResult result =
      run_attn("bleu --metrics chrf --lowercase -w 1 --chrf-word-order 2 " + path("hyp.txt") + " " + path("ref1.txt"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find("BLEU"), std::string::npos);
  EXPECT_NE(result.output.find("chrF2++ signature: nrefs:1|case:lc|eff:yes|nc:6|nw:2|space:no|"), std::string::npos);
  EXPECT_EQ(run_attn("bleu --metrics meteor " + path("hyp.txt") + " " + path("ref1.txt")).exit_code == 0, false);
}

TEST_F(BleuCommand, JsonOutput) {
  const RunResult result = run_attn("bleu --json " + path("hyp.txt") + " " + path("ref1.txt") + " " + path("ref2.txt"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json json = nlohmann::json::parse(result.output);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["name"], "BLEU");
  EXPECT_EQ(json[0]["score"], 48.53);
  EXPECT_EQ(json[0]["verbose_score"], "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  EXPECT_EQ(json[0]["nrefs"], "2");
  EXPECT_EQ(json[0]["tok"], "13a");
  EXPECT_EQ(json[0]["version"], kVersion);
  EXPECT_EQ(json[0]["exact"]["counts"], nlohmann::json({14, 7, 5, 3}));
  EXPECT_EQ(json[1]["name"], "chrF2");
  EXPECT_EQ(json[1]["score"], 59.73);
  EXPECT_EQ(json[1]["eff"], "yes");
}

TEST_F(BleuCommand, MismatchedLineCountsNameFilesAndCounts) {
  const std::string short_ref = write("short.txt", "The dog bit the man.\nIt was not unexpected.\n");
  const RunResult result = run_attn("bleu " + path("hyp.txt") + " " + short_ref);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(short_ref + " has 2 lines but " + path("hyp.txt") + " has 3"), std::string::npos)
      << result.output;
}

TEST_F(BleuCommand, InvalidUtf8NamesFileAndLine) {
  const std::string bad = write("bad.txt", "fine\nbroken \xC3\x28 here\nfine\n");
  const RunResult result = run_attn("bleu " + path("hyp.txt") + " " + bad);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(bad + ":2: invalid UTF-8"), std::string::npos) << result.output;
}

TEST_F(BleuCommand, EmptyReferenceLineIsAnError) {
  const std::string gap = write("gap.txt", "The dog bit the man.\n   \nThe man bit him first.\n");
  const RunResult result = run_attn("bleu " + path("hyp.txt") + " " + gap);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(gap + ":2: empty reference"), std::string::npos) << result.output;
  // With a second reference for that line, it is a variable number of references instead.
  const RunResult var = run_attn("bleu --metrics bleu " + path("hyp.txt") + " " + gap + " " + path("ref2.txt"));
  EXPECT_EQ(var.exit_code, 0) << var.output;
  EXPECT_NE(var.output.find("nrefs:var|"), std::string::npos) << var.output;
}

TEST_F(BleuCommand, MissingFileIsAnError) {
  const RunResult result = run_attn("bleu " + path("nope.txt") + " " + path("ref1.txt"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(path("nope.txt")), std::string::npos) << result.output;
}

}  // namespace
}  // namespace attn::eval
