// Models that know their languages: `attn train --source-lang --target-lang` records the codes in
// every model folder it writes, `attn average` and `attn quantize` carry them over, `attn serve
// --model DIR` serves the folder under them (SRC-TGT=DIR still wins), and folders that record none
// keep working where codes are given and get a clear message where they are needed.
#include <gtest/gtest.h>
#include <httplib.h>

#include <attn/translator.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/run_attn.h"
#include "common/temp_dir.h"
#include "decode/model_directory.h"
#include "serve/server_process.h"

namespace attn::serve {
namespace {

const std::string kFixture = ATTN_SERVE_MODEL_DIR;
const std::string kModelDir = kFixture + "/model";  // trained without languages

std::string train_arguments(const std::filesystem::path& run, const std::string& languages, int steps = 10) {
  return "train --preset tiny --d-model 32 --d-ff 64 --d-k 8 --d-v 8 --train-source " + kFixture +
         "/train.src --train-target " + kFixture + "/train.tgt --valid-source " + kFixture +
         "/dev.src --valid-target " + kFixture + "/dev.tgt --vocabulary " + kFixture + "/vocab.model --run-dir " +
         run.string() + " --max-steps " + std::to_string(steps) +
         " --save-every 5 --save-every-minutes 0 --valid-every 5 --valid-translate 0 --threads 1 " + languages;
}

nlohmann::json get_json(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get(path.c_str());
  if (!res || res->status != 200) return nullptr;
  return nlohmann::json::parse(res->body);
}

TEST(ModelLanguages, RecordedByTrainingCarriedOverAndServed) {
  const auto dir = testing::fresh_temp_dir("languages");
  const auto run = dir / "run";
  auto r = testing::run_attn(train_arguments(run, "--source-lang xx --target-lang yy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* folder : {"model", "best"}) {
    const ModelLanguages l = read_model_languages(run / folder);
    EXPECT_EQ(l.source, "xx") << folder;
    EXPECT_EQ(l.target, "yy") << folder;
  }
  r = testing::run_attn("average --run " + run.string() + " --last 2 --out " + (dir / "average").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_model_languages(dir / "average").source, "xx");
  r = testing::run_attn("quantize --model " + (dir / "average").string() + " --out " + (dir / "int8").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_model_languages(dir / "int8").target, "yy");
  // The library reports them (and "" for a folder that records none).
  EXPECT_EQ(Model((dir / "int8").string()).source_language(), "xx");
  EXPECT_EQ(Model((dir / "int8").string()).target_language(), "yy");
  EXPECT_EQ(Model(kModelDir).source_language(), "");

  {  // DIR alone: served under its own codes; SRC-TGT=DIR beside it under the given ones.
    testing::ServerProcess server({"--model", (dir / "int8").string(), "--model", "aa-bb=" + kModelDir});
    const nlohmann::json models = get_json(server.port(), "/v1/models");
    ASSERT_TRUE(models.is_object());
    ASSERT_EQ(models["models"].size(), 2u);
    EXPECT_EQ(models["models"][0]["id"], "xx-yy");
    EXPECT_EQ(models["models"][0]["source"], "xx");
    EXPECT_EQ(models["models"][1]["id"], "aa-bb");
    const nlohmann::json languages = get_json(server.port(), "/languages");
    std::set<std::string> codes;
    for (const auto& l : languages) codes.insert(l["code"].get<std::string>());
    EXPECT_EQ(codes, (std::set<std::string>{"aa", "bb", "xx", "yy"}));
  }
  {  // The given codes win over the recorded ones.
    testing::ServerProcess server({"--model", "cc-dd=" + (dir / "int8").string()});
    EXPECT_EQ(get_json(server.port(), "/v1/models")["models"][0]["id"], "cc-dd");
  }
  // A resumed run may change the languages (they do not shape training).
  r = testing::run_attn(train_arguments(run, "--source-lang xx --target-lang zz --resume", 12));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_model_languages(run / "model").target, "zz");
}

TEST(ModelLanguages, BadCodesAndFoldersWithoutThemAreClearErrors) {
  const auto dir = testing::fresh_temp_dir("languages_bad");
  auto r = testing::run_attn(train_arguments(dir / "a", "--source-lang en"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("give both source_lang and target_lang, or neither"), std::string::npos) << r.output;
  r = testing::run_attn(train_arguments(dir / "b", "--source-lang en-GB --target-lang es"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("\"en-GB\" is not a language code"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "a" / "checkpoints"));
  // A folder from before: fine with codes given, a message naming the fix without.
  r = testing::run_attn("serve --port 0 --model " + kModelDir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("does not record its languages"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("give --model SRC-TGT=" + kModelDir), std::string::npos) << r.output;
  r = testing::run_attn("serve --port 0 --model " + (dir / "nothing").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no such model folder"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace attn::serve
