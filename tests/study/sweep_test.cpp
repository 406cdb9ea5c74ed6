// Sweeps: the plan a sweep file expands to, the errors of a bad file, the report read back from
// hand-written run folders, and scripts/sweep end to end on a tiny corpus.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "common/count_of.h"
#include "common/temp_dir.h"
#include "core/error.h"
#include "model/model_config.h"
#include "study/sweep.h"
#include "study/sweep_report.h"

namespace attn::study {
namespace {

namespace fs = std::filesystem;
using testing::count_of;
using Json = nlohmann::ordered_json;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

SweepPlan parse(const std::string& text) { return parse_sweep(Json::parse(text), "s.json"); }

TEST(SweepPlan, GridTimesVariantsTimesSeedsInFileOrder) {
  const SweepPlan p = parse(R"({
    "base": {"preset": "tiny", "warmup_steps": 100, "lr_scale": 0.5},
    "variants": [{"name": "a"}, {"name": "b", "encoder_layers": 3}],
    "grid": {"lr_scale": [1, 2], "dropout": [0.0, 0.3]},
    "budget": {"updates": 500}, "seeds": 2})");
  ASSERT_EQ(p.runs.size(), 2u * 4u * 2u);
  EXPECT_EQ(p.knobs, (std::vector<std::string>{"variant", "lr_scale", "dropout"}));
  std::vector<std::string> names;
  for (const auto& r : p.runs) names.push_back(r.name);
  // Variants slowest, then the grid keys in the file's order, seeds fastest.
  EXPECT_EQ(names[0], "a,lr_scale=1,dropout=0.0.seed1");
  EXPECT_EQ(names[1], "a,lr_scale=1,dropout=0.0.seed2");
  EXPECT_EQ(names[2], "a,lr_scale=1,dropout=0.3.seed1");
  EXPECT_EQ(names[4], "a,lr_scale=2,dropout=0.0.seed1");
  EXPECT_EQ(names[8], "b,lr_scale=1,dropout=0.0.seed1");
  EXPECT_EQ(names[15], "b,lr_scale=2,dropout=0.3.seed2");
  const SweepRun& r = p.runs[15];
  EXPECT_EQ(r.point, "b,lr_scale=2,dropout=0.3");
  EXPECT_EQ(r.seed, 2u);
  // The grid's value wins over the base's; the variant's keys apply; the sweep's budget and seed.
  EXPECT_EQ(r.options.at("lr_scale"), 2);
  EXPECT_EQ(r.options.at("dropout"), 0.3);
  EXPECT_EQ(r.options.at("encoder_layers"), 3);
  EXPECT_EQ(r.options.at("warmup_steps"), 100);
  EXPECT_EQ(r.options.at("preset"), "tiny");
  EXPECT_EQ(r.options.at("max_steps"), 500);
  EXPECT_EQ(r.options.at("seed"), 2);
  EXPECT_FALSE(r.options.contains("time_budget_minutes"));
  EXPECT_FALSE(r.options.contains("name"));
  EXPECT_EQ(r.values, Json::parse(R"({"variant": "b", "lr_scale": 2, "dropout": 0.3})"));
  // Parameters of the run's own model: tiny with 3 encoder layers, the default 8000 pieces.
  ModelConfig c = ModelConfig::preset("tiny");
  c.encoder_layers = 3;
  c.vocab_size = 8000;
  EXPECT_EQ(r.parameters, c.parameter_count());
  EXPECT_EQ(r.vocabulary_size, 8000);
  EXPECT_NE(p.runs[0].parameters, r.parameters);
}

TEST(SweepPlan, SeedsBudgetScoringAndVocabulary) {
  const SweepPlan p = parse(R"({
    "base": {"preset": "tiny", "vocabulary_size": 4000},
    "grid": {"vocabulary_size": [2000, 4000]},
    "budget": {"minutes": 2.5}, "seeds": [3, 7],
    "score": {"average_last": 3, "dev_verses": 0, "beam": [1, 4], "alpha": [0.6, 1]}})");
  ASSERT_EQ(p.runs.size(), 4u);
  EXPECT_EQ(p.runs[0].name, "vocabulary_size=2000.seed3");
  EXPECT_EQ(p.runs[1].name, "vocabulary_size=2000.seed7");
  EXPECT_EQ(p.runs[0].vocabulary_size, 2000);
  EXPECT_EQ(p.runs[2].vocabulary_size, 4000);
  EXPECT_FALSE(p.runs[0].options.contains("vocabulary_size"));  // not an attn train option
  EXPECT_EQ(p.runs[1].options.at("seed"), 7);
  EXPECT_EQ(p.runs[0].options.at("time_budget_minutes"), 2.5);
  EXPECT_FALSE(p.runs[0].options.contains("max_steps"));
  EXPECT_GE(p.runs[0].options.at("keep_checkpoints").get<int>(), 3);
  ASSERT_EQ(p.scoring.decodings.size(), 4u);
  EXPECT_EQ(p.scoring.decodings[0].label(), "beam1-alpha0.6");
  EXPECT_EQ(p.scoring.decodings[1].label(), "beam1-alpha1");
  EXPECT_EQ(p.scoring.decodings[3].label(), "beam4-alpha1");
  EXPECT_EQ(p.scoring.average_last, 3);
  EXPECT_EQ(p.scoring.dev_verses, 0);
  // No grid and no variants: one setting, "base".
  const SweepPlan one = parse(R"({"base": {"preset": "tiny"}, "budget": {"updates": 10}})");
  ASSERT_EQ(one.runs.size(), 1u);
  EXPECT_EQ(one.runs[0].name, "base.seed1");
  EXPECT_TRUE(one.knobs.empty());
}

// A variant may have its own seeds and budget (Table 3: big trains 3x as long, second seeds for
// some rows only); everything else keeps the sweep's.
TEST(SweepPlan, AVariantMayNameItsOwnSeedsAndBudget) {
  const SweepPlan p = parse(R"({"base": {"preset": "tiny"},
    "variants": [{"name": "a"}, {"name": "b", "seeds": [1, 2], "budget": {"updates": 30}, "dropout": 0.2}],
    "budget": {"updates": 10}, "seeds": 1})");
  ASSERT_EQ(p.runs.size(), 3u);
  EXPECT_EQ(p.runs[0].name, "a.seed1");
  EXPECT_EQ(p.runs[0].options.at("max_steps"), 10);
  EXPECT_EQ(p.runs[2].name, "b.seed2");
  EXPECT_EQ(p.runs[2].options.at("max_steps"), 30);
  EXPECT_EQ(p.runs[2].budget.updates, 30);
  EXPECT_FALSE(p.runs[2].options.contains("seeds"));
  EXPECT_FALSE(p.runs[2].options.contains("budget"));
  EXPECT_EQ(p.runs[2].options.at("dropout"), 0.2);
  EXPECT_NE(message_of([] {
              parse(R"({"variants": [{"name": "b", "seeds": []}], "budget": {"updates": 1}})");
            }).find("variant \"b\": seeds' is an empty list"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              parse(R"({"variants": [{"name": "b", "budget": {"steps": 3}}], "budget": {"updates": 1}})");
            }).find("variant \"b\": budget' must be {\"updates\": N} or"),
            std::string::npos);
  const fs::path dir = testing::fresh_temp_dir("sweep_own_budget");
  write_sweep_plan(p, dir);
  write_sweep_report(dir, "");
  EXPECT_NE(slurp(dir / "report.md").find("Every run: 10 updates (b: 30 updates);"), std::string::npos)
      << slurp(dir / "report.md");
}

TEST(SweepPlan, BadFilesAreRefusedNamingTheFileAndKey) {
  const std::string ok_budget = R"("budget": {"updates": 10})";
  auto err = [&](const std::string& text) { return message_of([&] { parse(text); }); };
  auto expect_has = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << message << "\n(expected: " << part << ")";
    EXPECT_EQ(message.rfind("s.json", 0), 0u) << message;  // names the file first
  };
  expect_has(err(R"({"base": {"lr_scal": 1}, )" + ok_budget + "}"), "unknown option 'lr_scal'");
  expect_has(err(R"({"grid": {"lr_scal": [1]}, )" + ok_budget + "}"), "unknown option 'lr_scal'");
  expect_has(err(R"({"variants": [{"name": "x", "droput": 0.1}], )" + ok_budget + "}"), "unknown option 'droput'");
  expect_has(err(R"({"base": {"lr_scale": "high"}, )" + ok_budget + "}"), "option 'lr_scale' must be a number");
  expect_has(err(R"({"grid": {"warmup_steps": [100, 0]}, )" + ok_budget + "}"), "warmup_steps must be at least 1");
  expect_has(err(R"({"grid": {"warmup_steps": [100, 0]}, )" + ok_budget + "}"), "run warmup_steps=0.seed1");
  expect_has(err(R"({"grid": {"encoder_layers": [2.5]}, )" + ok_budget + "}"),
             "option 'encoder_layers' must be a whole");
  expect_has(err(R"({"grid": {"lr_scale": []}, )" + ok_budget + "}"),
             "'grid.lr_scale' is an empty list: it asks for zero runs");
  expect_has(err(R"({"variants": [], )" + ok_budget + "}"), "'variants' is an empty list: it asks for zero runs");
  expect_has(err(R"({"seeds": [], )" + ok_budget + "}"), "'seeds' is an empty list");
  expect_has(err(R"({"seeds": 0, )" + ok_budget + "}"), "'seeds' must be a whole number from 1");
  expect_has(err(R"({"base": {"max_steps": 5}, )" + ok_budget + "}"), "'base.max_steps': the sweep sets this itself");
  expect_has(err(R"({"grid": {"seed": [1, 2]}, )" + ok_budget + "}"), "'grid.seed': the sweep sets this itself");
  expect_has(err(R"({"base": {"train_source": "x"}, )" + ok_budget + "}"), "the sweep sets this itself");
  expect_has(err(R"({"base": {}})"), "'budget' is missing");
  expect_has(err(R"({"budget": {"updates": 10, "minutes": 1}})"), "'budget' must be {\"updates\": N} or");
  expect_has(err(R"({"budget": {"updates": 0}})"), "'budget.updates' must be a whole number from 1");
  expect_has(err(R"({"budget": {"minutes": -1}})"), "'budget.minutes' must be a number above 0");
  expect_has(err(R"({"budget": {"updates": 1}, "bugdet": 1})"), "unknown key 'bugdet'");
  // The sweep's beam and alpha by the one rule of every face (decode/search_options.h).
  expect_has(err(R"({"score": {"beam": 0}, )" + ok_budget + "}"),
             "'score.beam': beam must be an integer from 1 to 128 (got 0)");
  expect_has(err(R"({"score": {"beam": [4, 129]}, )" + ok_budget + "}"),
             "'score.beam': beam must be an integer from 1 to 128 (got 129)");
  expect_has(err(R"({"score": {"beam": 2.5}, )" + ok_budget + "}"), "'score.beam' must be a whole number");
  expect_has(err(R"({"score": {"alpha": [0.6, 11]}, )" + ok_budget + "}"),
             "'score.alpha': alpha must be a finite number from 0 to 10 (got 11)");
  expect_has(err(R"({"score": {"alpha": "x"}, )" + ok_budget + "}"), "'score.alpha' must be a number, or a list");
  expect_has(err(R"({"score": {"beem": 4}, )" + ok_budget + "}"), "unknown key 'score.beem'");
  expect_has(err(R"({"score": {"dev_pick": "last"}, )" + ok_budget + "}"),
             "'score.dev_pick' must be \"first\" or \"spread\"");
  expect_has(err(R"({"score": {"alpha": [0.6, 0.6]}, )" + ok_budget + "}"), "asks for beam4-alpha0.6 twice");
  expect_has(err(R"({"variants": [{"name": "a", "lr_scale": 2}], "grid": {"lr_scale": [1]}, )" + ok_budget + "}"),
             "a key is varied by the grid or by the variants, not both");
  expect_has(err(R"({"variants": [{"name": "a"}, {"name": "a"}], )" + ok_budget + "}"), "two variants are called");
  expect_has(err(R"({"variants": [{"name": "../x"}], )" + ok_budget + "}"), "'variants[0].name' must be a string of");
  expect_has(err(R"({"grid": {"lr_scale": [1, 1]}, )" + ok_budget + "}"), "'grid.lr_scale' lists 1 twice");
  expect_has(err(R"({"base": {"preset": "huge"}, )" + ok_budget + "}"),
             "unknown preset 'huge' (known: base, big, small, tiny, cpu-hour)");
  expect_has(err(R"({"base": {"keep_checkpoints": 2}, "score": {"average_last": 5}, )" + ok_budget + "}"),
             "keep_checkpoints 2 is below score.average_last 5");
  expect_has(
      err(R"({"variants": [{"name": "e", "ema_decay": 0.999}], "score": {"average_last": 5}, )" + ok_budget + "}"),
      "run e.seed1: ema_decay 0.999 with score.average_last 5: the checkpoints hold the weights, not their "
      "moving average");
  expect_has(err("[1]"), "a sweep file must be a JSON object");

  const fs::path dir = testing::fresh_temp_dir("sweep_file");
  write(dir / "bad.json", "{\"budget\": ");
  const std::string not_json = message_of([&] { read_sweep_file((dir / "bad.json").string()); });
  EXPECT_EQ(not_json.rfind((dir / "bad.json").string() + ": not valid JSON", 0), 0u) << not_json;
  const std::string missing = message_of([&] { read_sweep_file((dir / "none.json").string()); });
  EXPECT_NE(missing.find("cannot open the sweep file"), std::string::npos) << missing;
}

TEST(SweepPlan, AFolderKeepsItsPlanAndRefusesAnother) {
  const fs::path dir = testing::fresh_temp_dir("sweep_folder");
  const std::string text = R"({"base": {"preset": "tiny"}, "grid": {"lr_scale": [1, 2]}, "budget": {"updates": 10}})";
  const SweepPlan p = parse(text);
  write_sweep_plan(p, dir / "s");
  EXPECT_TRUE(fs::exists(dir / "s" / "runs" / "lr_scale=2.seed1" / "options.json"));
  EXPECT_EQ(Json::parse(slurp(dir / "s" / "runs" / "lr_scale=2.seed1" / "options.json")), p.runs[1].options);
  write_sweep_plan(parse(text), dir / "s");  // the same file again: accepted
  EXPECT_EQ(read_planned_sweep(dir / "s").runs.size(), 2u);
  const SweepPlan other =
      parse(R"({"base": {"preset": "tiny"}, "grid": {"lr_scale": [1, 3]}, "budget": {"updates": 10}})");
  const std::string m = message_of([&] { write_sweep_plan(other, dir / "s"); });
  EXPECT_NE(m.find("planned from another sweep file"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(dir / "s" / "runs" / "lr_scale=3.seed1"));
}

TEST(SweepReport, CrossEntropyOfAScoreTableByHand) {
  const fs::path dir = testing::fresh_temp_dir("sweep_tsv");
  write(dir / "a.tsv", "line\tlog_prob\ttokens\tppl\n1\t-2.0000\t2\t2.718\n2\t-4.0000\t6\t1.948\n");
  EXPECT_DOUBLE_EQ(score_table_cross_entropy(dir / "a.tsv"), 6.0 / 8.0);
  write(dir / "b.tsv", "line\tlog_prob\ttokens\tppl\n1\t-2.0000\tx\t2.718\n");
  EXPECT_NE(message_of([&] { score_table_cross_entropy(dir / "b.tsv"); }).find("b.tsv:2: tokens 'x'"),
            std::string::npos);
  write(dir / "c.tsv", "1\t-2.0\t2\t1\n");
  EXPECT_NE(message_of([&] { score_table_cross_entropy(dir / "c.tsv"); }).find("c.tsv:1: expected attn score's header"),
            std::string::npos);
  write(dir / "d.tsv", "line\tlog_prob\ttokens\tppl\n");
  EXPECT_NE(message_of([&] { score_table_cross_entropy(dir / "d.tsv"); }).find("no scored sentence"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(steady_tokens_per_second({100, 300, 200, 400}), 300);  // the first left out
  EXPECT_DOUBLE_EQ(steady_tokens_per_second({100, 300, 200, 400, 500}), 350);
  EXPECT_DOUBLE_EQ(steady_tokens_per_second({100}), 100);
}

// A finished run's folder as scripts/sweep leaves it, written by hand.
void finished_run(const fs::path& folder, double bleu, double chrf) {
  write(folder / "train" / "train.jsonl",
        R"({"type":"train","step":50,"loss":5,"tokens_per_second":100,"elapsed_seconds":60})"
        "\n"
        R"({"type":"train","step":100,"loss":4,"tokens_per_second":300,"elapsed_seconds":120})"
        "\n"
        R"({"type":"train","step":150,"loss":3,"tokens_per_second":200,"elapsed_seconds":180})"
        "\n"
        R"({"type":"train","step":200,"loss":3,"tokens_per_second":400,"elapsed_seconds":240})"
        "\n"
        R"({"type":"valid","step":200,"cross_entropy":2.5})"
        "\n");
  // Cross-entropy 6/4 = 1.5 nats: perplexity e^1.5 = 4.4817.
  write(folder / "dev.score.tsv", "line\tlog_prob\ttokens\tppl\n1\t-2.0000\t2\t2.718\n2\t-4.0000\t2\t7.389\n");
  write(folder / "dev.beam4-alpha0.6.json", "[{\"name\": \"BLEU\", \"score\": " + std::to_string(bleu) +
                                                "}, {\"name\": \"chrF2\", \"score\": " + std::to_string(chrf) + "}]");
  write(folder / "finished", "");
}

TEST(SweepReport, EveryRunTheSeedSpreadAndAChartPerKnob) {
  const fs::path dir = testing::fresh_temp_dir("sweep_report");
  const SweepPlan plan = parse(R"({"title": "LR", "base": {"preset": "tiny"}, "grid": {"lr_scale": [1, 2, 4]},
                                   "budget": {"updates": 200}, "seeds": 2})");
  write_sweep_plan(plan, dir);
  const fs::path runs = dir / "runs";
  finished_run(runs / "lr_scale=1.seed1", 20, 40);
  finished_run(runs / "lr_scale=1.seed2", 22, 42);
  finished_run(runs / "lr_scale=4.seed1", 25, 45);
  // lr_scale=2: one seed diverged, the other is still training.
  write(runs / "lr_scale=2.seed1" / "train" / "train.jsonl",
        R"({"type":"train","step":5,"loss":9,"tokens_per_second":100,"elapsed_seconds":6})"
        "\n");
  write(runs / "lr_scale=2.seed1" / "diverged.txt",
        "attn: error: training diverged at update 7: the loss is not finite. The update was not applied\n");
  write(runs / "lr_scale=2.seed2" / "train" / "train.jsonl",
        R"({"type":"train","step":50,"loss":9,"tokens_per_second":100,"elapsed_seconds":6})"
        "\n");
  const SweepReportCounts counts = write_sweep_report(dir, "Set up by hand.\n");
  EXPECT_EQ(counts.runs, 6);
  EXPECT_EQ(counts.finished, 3);
  EXPECT_EQ(counts.diverged, 1);
  const std::string md = slurp(dir / "report.md");
  for (const char* part : {
           "# LR\n\nSet up by hand.\n",
           // Settings, best first: the mean over finished seeds, their range, chrF and perplexity.
           "| lr_scale=4 | 1 of 2 | **25.00** | one seed | 45.00 | 4.48 |\n"
           "| lr_scale=1 | 2 of 2 | 21.00 | 20.00–22.00 | 41.00 | 4.48 |\n"
           "| lr_scale=2 | 0 of 2 (1 diverged) | ",
           "the widest range of dev BLEU between the seeds of one setting is 2.00",
           // Every run, with its values, seed, updates, minutes, median tokens/s, PPL, BLEU, chrF.
           "| lr_scale=1.seed2 | 1 | 2 | ",
           "M | 200 | 4.0 | 300 | 4.48 | 22.00 | 42.00 |",
           "| lr_scale=2.seed1 | 2 | 1 | ",
           "M | 5 | 0.1 | 100 | diverged | | |",
           "M | 50 | 0.1 | 100 | running | | |",
           "| lr_scale=4.seed2 | 4 | 2 | ",
           "M | not started |",
           "- lr_scale=2.seed1: attn: error: training diverged at update 7: the loss is not finite",
           "![dev BLEU against lr_scale](knob-lr_scale.png)",
       })
    EXPECT_NE(md.find(part), std::string::npos) << "missing: " << part << "\n" << md;
  const std::string svg = slurp(dir / "knob-lr_scale.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("dev BLEU against lr_scale"), std::string::npos);
  EXPECT_EQ(slurp(dir / "knob-lr_scale.png").substr(1, 3), "PNG");

  // A score file without chrF is named, not read as zero.
  write(runs / "lr_scale=4.seed1" / "dev.beam4-alpha0.6.json", "[{\"name\": \"BLEU\", \"score\": 25}]");
  const std::string m = message_of([&] { write_sweep_report(dir, ""); });
  EXPECT_NE(m.find("dev.beam4-alpha0.6.json: expected BLEU and chrF2"), std::string::npos) << m;
}

// A run stopped by its time budget between two of train.jsonl's records (every 50 updates here):
// its updates are counted to the checkpoint saved where it stopped, not to the last record.
TEST(SweepReport, UpdatesCountToTheLastCheckpoint) {
  const fs::path dir = testing::fresh_temp_dir("sweep_last_checkpoint");
  const SweepPlan plan =
      parse(R"({"base": {"preset": "tiny"}, "variants": [{"name": "a"}], "budget": {"minutes": 4}})");
  write_sweep_plan(plan, dir);
  const fs::path run = dir / "runs" / "a.seed1";
  finished_run(run, 10, 30);
  for (const char* name : {"step-00000150.safetensors", "step-00000203.safetensors", "step-00000999.safetensors.tmp"})
    write(run / "train" / "checkpoints" / name, "");
  write_sweep_report(dir, "");
  const std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("M | 203 | 4.0 | 300 | 4.48 | 10.00 | 30.00 |"), std::string::npos) << md;
}

TEST(SweepReport, VariantsAreChartedByNumber) {
  const fs::path dir = testing::fresh_temp_dir("sweep_variants");
  const SweepPlan plan = parse(R"({"base": {"preset": "tiny"}, "variants": [{"name": "deep"}, {"name": "wide"}],
                                   "budget": {"updates": 200}})");
  write_sweep_plan(plan, dir);
  finished_run(dir / "runs" / "deep.seed1", 10, 30);
  finished_run(dir / "runs" / "wide.seed1", 12, 31);
  write_sweep_report(dir, "");
  const std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("| wide | 1 of 1 | **12.00** |"), std::string::npos) << md;
  EXPECT_NE(slurp(dir / "knob-variant.svg").find(">wide</text>"), std::string::npos);  // a named tick
  EXPECT_NE(md.find("No setting has two finished seeds"), std::string::npos) << md;
  EXPECT_TRUE(fs::exists(dir / "knob-variant.svg"));
}

// With two seeds a named setting's mean is a filled disc and its seeds hollow circles (points
// alone, as categories have no order), each named in the legend.
TEST(SweepReport, TheMeanOfTheSeedsIsToldApartFromTheSeeds) {
  const fs::path dir = testing::fresh_temp_dir("sweep_variant_seeds");
  const SweepPlan plan = parse(R"({"base": {"preset": "tiny"}, "variants": [{"name": "deep"}, {"name": "wide"}],
                                   "budget": {"updates": 200}, "seeds": 2})");
  write_sweep_plan(plan, dir);
  finished_run(dir / "runs" / "deep.seed1", 10, 30);
  finished_run(dir / "runs" / "deep.seed2", 14, 30);
  finished_run(dir / "runs" / "wide.seed1", 12, 31);
  finished_run(dir / "runs" / "wide.seed2", 13, 31);
  write_sweep_report(dir, "");
  const std::string svg = slurp(dir / "knob-variant.svg");
  EXPECT_EQ(count_of(svg, "r=\"6\" fill=\"#1f77b4\"/>"), 3) << svg;         // two means and the legend's
  EXPECT_EQ(count_of(svg, "fill=\"white\" stroke=\"#1f77b4\""), 5) << svg;  // four seeds and the legend's
  EXPECT_NE(svg.find(">dev BLEU (mean of the seeds)</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">dev BLEU (each seed)</text>"), std::string::npos) << svg;
  EXPECT_EQ(slurp(dir / "knob-variant.png").substr(1, 3), "PNG");
}

// scripts/sweep end to end on a tiny corpus (Genesis 1-5 of the test fixtures, its first 10 verses
// as the dev set): a variant that diverges is recorded and the sweep goes on; the others finish
// with every file the report reads; again, nothing is trained twice; a run whose scoring did not
// finish resumes from its checkpoint; a changed file is refused.
TEST(SweepScript, RunsRecordsDivergenceKeepsResumesAndRefusesAnotherPlan) {
  const fs::path dir = testing::fresh_temp_dir("sweep_script");
  const fs::path fixtures = fs::path(ATTN_SOURCE_DIR) / "tests" / "data" / "fixtures";
  const std::string en = (fixtures / "genesis.en").string(), es = (fixtures / "genesis.es").string();
  ASSERT_EQ(
      std::system(
          ("cd " + dir.string() + " && head -n 10 " + en + " > dev.en && head -n 10 " + es + " > dev.es").c_str()),
      0);
  const std::string sweep = R"({"title": "tiny", "base": {"preset": "tiny", "batch_tokens": 512, "warmup_steps": 2,
      "vocabulary_size": 600, "threads": 1},
    "variants": [{"name": "ok"}, {"name": "wild", "lr_scale": 1000000, "warmup_steps": 1}],
    "grid": {"dropout": [0.0, 0.1]},
    "budget": {"updates": 6}, "seeds": 1,
    "score": {"average_last": 2, "dev_verses": 5, "dev_pick": "spread", "beam": [1, 2], "alpha": 0.6}})";
  write(dir / "tiny.json", sweep);
  const std::string script = std::string(ATTN_SOURCE_DIR) + "/scripts/sweep tiny.json --attn " + ATTN_BINARY +
                             " --run study --vocab-dir vocab --train-source " + en + " --train-target " + es +
                             " --valid-source dev.en --valid-target dev.es --threads 1";
  auto sh = [&](const std::string& command, const std::string& log) {
    return std::system(("cd " + dir.string() + " && " + command + " > " + log + " 2>&1").c_str());
  };
  ASSERT_EQ(sh(script, "first.log"), 0) << slurp(dir / "first.log");
  EXPECT_TRUE(fs::exists(dir / "vocab" / "bpe-600.model"));
  const fs::path runs = dir / "study" / "runs";
  for (const char* name : {"ok,dropout=0.0.seed1", "ok,dropout=0.1.seed1"}) {
    for (const char* file : {"finished", "dev.score.tsv", "dev.beam1-alpha0.6.json", "dev.beam2-alpha0.6.json",
                             "dev.beam2-alpha0.6.txt", "model/config.json"})
      EXPECT_TRUE(fs::exists(runs / name / file)) << name << "/" << file << "\n" << slurp(dir / "first.log");
    const std::string translations = slurp(runs / name / "dev.beam2-alpha0.6.txt");
    EXPECT_EQ(std::count(translations.begin(), translations.end(), '\n'), 5);
  }
  for (const char* name : {"wild,dropout=0.0.seed1", "wild,dropout=0.1.seed1"}) {
    EXPECT_TRUE(fs::exists(runs / name / "diverged.txt")) << name << "\n" << slurp(dir / "first.log");
    EXPECT_FALSE(fs::exists(runs / name / "finished")) << name;
    EXPECT_NE(slurp(runs / name / "diverged.txt").find("training diverged at update"), std::string::npos);
  }
  // Five of the ten dev verses, spread evenly: lines 1, 3, 5, 7 and 9 (line floor(k * 10 / 5) + 1).
  {
    std::ifstream dev(dir / "dev.en");
    std::string expected, line;
    for (int n = 1; std::getline(dev, line); ++n)
      if (n % 2 == 1) expected += line + "\n";
    EXPECT_EQ(slurp(dir / "study" / "dev-bleu.src"), expected);
  }
  const std::string report = slurp(dir / "study" / "report.md");
  EXPECT_NE(report.find("BLEU and chrF2 of 5 evenly spaced dev verses"), std::string::npos) << report;
  EXPECT_NE(report.find("| ok,dropout=0.0 | 1 of 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| wild,dropout=0.1 | 0 of 1 (1 diverged) |"), std::string::npos) << report;
  EXPECT_NE(report.find("Run by `scripts/sweep tiny.json`"), std::string::npos) << report;
  EXPECT_TRUE(fs::exists(dir / "study" / "knob-dropout.png"));
  EXPECT_TRUE(fs::exists(dir / "study" / "knob-variant.png"));

  // Again: nothing trained twice.
  const fs::path finished = runs / "ok,dropout=0.1.seed1" / "finished";
  const auto finished_at = fs::last_write_time(finished);
  ASSERT_EQ(sh(script, "second.log"), 0) << slurp(dir / "second.log");
  const std::string second = slurp(dir / "second.log");
  EXPECT_NE(second.find("ok,dropout=0.1.seed1: done earlier, kept"), std::string::npos) << second;
  EXPECT_NE(second.find("wild,dropout=0.0.seed1: done earlier, kept"), std::string::npos) << second;
  EXPECT_EQ(second.find("model: "), std::string::npos) << second;  // attn train never started
  EXPECT_EQ(fs::last_write_time(finished), finished_at);

  // A run whose scoring did not finish resumes from its checkpoint, not from scratch.
  fs::remove(finished);
  ASSERT_EQ(sh(script, "third.log"), 0) << slurp(dir / "third.log");
  EXPECT_NE(slurp(dir / "third.log").find("resuming from"), std::string::npos) << slurp(dir / "third.log");
  EXPECT_TRUE(fs::exists(finished));

  // Another file in the same folder: refused before anything trains.
  write(dir / "tiny.json", std::string(sweep).replace(sweep.find("[0.0, 0.1]"), 10, "[0.0, 0.2]"));
  EXPECT_NE(sh(script, "fourth.log"), 0);
  EXPECT_NE(slurp(dir / "fourth.log").find("planned from another sweep file"), std::string::npos)
      << slurp(dir / "fourth.log");
  EXPECT_FALSE(fs::exists(runs / "ok,dropout=0.2.seed1"));
}

}  // namespace
}  // namespace attn::study
