// The Table 3 study's records: written from a finished run's folder and read back, damaged records
// named and not counted, a records folder that refuses another plan, a pace measured from hand-made
// training logs, and the report built from hand-written records alone.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "core/error.h"
#include "study/sweep.h"
#include "study/table3.h"
#include "study/table3_record.h"
#include "study/table3_study.h"

namespace attn::study {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

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

// A study of base (two seeds) and A1 at 1600 updates, as `attn table3 plan` leaves its folder.
Table3Settings settings() {
  Table3Settings s = table3_settings(table3_preset("quick"), {"base", "A1"}, std::vector<std::string>{"base"}, 8000);
  s.training.steps = 1600;
  s.training.validations = 4;
  return s;
}

// A training log of 4 records 400 updates apart, `seconds_per_update` each, and a validation after
// each: cross-entropy ce + 400 / step.
std::string training_log(double ce, double seconds_per_update, int records = 4) {
  std::ostringstream log;
  log.precision(17);
  for (int k = 1; k <= records; ++k) {
    const int step = 400 * k;
    log << R"({"type":"train","step":)" << step << R"(,"loss":6.0,"tokens_per_second":)" << 1000 * k
        << R"(,"elapsed_seconds":)" << step * seconds_per_update << "}\n";
    log << R"({"type":"valid","step":)" << step << R"(,"loss":6.0,"cross_entropy":)" << ce + 400.0 / step << "}\n";
  }
  return log.str();
}

// A run that scripts/sweep finished: its log, configuration, attn score's table (8 tokens at
// cross-entropy `ce`), attn bleu's JSON and the translations.
void finished_run(const fs::path& study, const std::string& name, double ce, double bleu) {
  const fs::path dir = study / "runs" / name;
  write(dir / "train" / "train.jsonl", training_log(ce, 0.25));
  write(dir / "train" / "config.json", R"({"precision": "fp32", "heads": 8, "seed": 1})");
  std::ostringstream tsv;
  tsv.precision(17);
  tsv << "line\tlog_prob\ttokens\tppl\n1\t" << -3 * ce << "\t3\t1\n2\t" << -5 * ce << "\t5\t1\n";
  write(dir / "dev.score.tsv", tsv.str());
  write(
      dir / "dev.beam4-alpha0.6.json",
      R"([{"name":"BLEU","score":)" + std::to_string(bleu) +
          R"(,"signature":"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"},)"
          R"({"name":"chrF2","score":40.0,"signature":"nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"}])");
  write(dir / "dev.beam4-alpha0.6.txt", "hola\nmundo\n");
  write(dir / "finished", "");
}

fs::path study_folder(const std::string& name) {
  const fs::path dir = testing::fresh_temp_dir("table3_record_" + name);
  const Table3Settings s = settings();
  plan_table3_study(dir / "study", s);
  write_sweep_plan(read_sweep_file((dir / "study" / "table3-sweep.json").string()), dir / "study");
  return dir;
}

MachineInfo machine() { return {"CPU X", 25, 17, 2, false, "sitting-1"}; }

TEST(Table3Record, WrittenFromAFinishedRunAndReadBack) {
  const fs::path dir = study_folder("roundtrip");
  const fs::path study = dir / "study", records = dir / "records";
  const Table3Settings s = settings();
  EXPECT_NE(message_of([&] {
              make_table3_record(study, s, "A1.seed1", {}, machine(), "t");
            }).find("A1.seed1: the run has not finished"),
            std::string::npos);
  EXPECT_NE(message_of([&] { make_table3_record(study, s, "C3.seed1", {}, machine(), "t"); }).find("no run 'C3.seed1'"),
            std::string::npos);
  finished_run(study, "A1.seed1", std::log(150.0), 3.25);
  const PaceMeasurement pace{0.5, 0.25, 2.0, 2};
  const Table3Record made = make_table3_record(study, s, "A1.seed1", pace, machine(), "2026-12-02T07:00:00Z");
  check_records_plan(records, s);
  write_table3_record(records, made, study / "runs" / "A1.seed1" / "train" / "train.jsonl");
  EXPECT_FALSE(fs::exists(records / "runs" / ".A1.seed1.tmp"));

  const Table3Record r = read_table3_record(records / "runs" / "A1.seed1", table3_settings_json(s));
  EXPECT_EQ(r.name, "A1.seed1");
  EXPECT_EQ(r.row, "A1");
  EXPECT_EQ(r.seed, 1);
  EXPECT_EQ(r.updates, 1600);
  EXPECT_NEAR(r.dev_ppl, 150.0, 1e-9);  // 8 tokens at log(150) each
  EXPECT_DOUBLE_EQ(r.bleu, 3.25);
  EXPECT_DOUBLE_EQ(r.chrf, 40);
  EXPECT_EQ(r.precision, "fp32");
  EXPECT_EQ(r.config.at("heads"), 8);
  EXPECT_EQ(r.machine.cpu, "CPU X");
  EXPECT_EQ(r.machine.sitting, "sitting-1");
  EXPECT_DOUBLE_EQ(r.training_seconds, 400);  // 1600 updates at 0.25 s
  EXPECT_DOUBLE_EQ(r.seconds_per_update, 0.25);
  EXPECT_DOUBLE_EQ(r.tokens_per_second, 3000);  // median of 2000, 3000, 4000 (the first left out)
  ASSERT_TRUE(r.pace.has_value());
  EXPECT_DOUBLE_EQ(r.pace->relative, 2.0);
  EXPECT_EQ(r.pace->rounds, 2);
  EXPECT_EQ(r.translated_verses, 2);
  // sha256sum of "hola\nmundo\n".
  EXPECT_EQ(r.translations_sha256, "8feae01b9f002a219caf8aa59b5ab6204a2eb931051f5b5e50d0af7bd58fa31f");
  EXPECT_EQ(r.finished, "2026-12-02T07:00:00Z");
  ASSERT_EQ(r.dev_curve.size(), 4u);
  EXPECT_DOUBLE_EQ(r.dev_curve[1].value, std::log(150.0) + 0.5);
  EXPECT_NE(r.scores.dump().find("tok:13a"), std::string::npos);
  // What the report reads: the pace in base's updates.
  const RunResult x = run_result(r);
  EXPECT_DOUBLE_EQ(x.seconds_per_update, 2.0);
  EXPECT_EQ(x.machine, "CPU X (family 25, model 17), 2 cores");
  EXPECT_NEAR(*last_quarter_change(x), 1 - std::exp(-1.0 / 12), 1e-12);  // ppl 150 e^(1/3) -> 150 e^(1/4)
  // Base's record keeps no pace measurement: 1 by definition.
  finished_run(study, "base.seed1", std::log(100.0), 20);
  const Table3Record base = make_table3_record(study, s, "base.seed1", pace, machine(), "t");
  EXPECT_FALSE(base.pace.has_value());
  EXPECT_DOUBLE_EQ(run_result(base).seconds_per_update, 1.0);
  fs::remove_all(dir);
}

TEST(Table3Record, DamagedRecordsAreNamedAndNotCounted) {
  const fs::path dir = study_folder("damaged");
  const fs::path study = dir / "study", records = dir / "records";
  const Table3Settings s = settings();
  check_records_plan(records, s);
  for (const char* name : {"base.seed1", "base.seed2", "A1.seed1"}) {
    finished_run(study, name, std::log(100.0), 20);
    write_table3_record(records, make_table3_record(study, s, name, {}, machine(), "t"),
                        study / "runs" / name / "train" / "train.jsonl");
  }
  EXPECT_EQ(scan_table3_records(records, s).records.size(), 3u);
  const fs::path runs = records / "runs";
  // Torn JSON.
  const std::string whole = slurp(runs / "A1.seed1" / "record.json");
  write(runs / "A1.seed1" / "record.json", whole.substr(0, whole.size() / 2));
  // A missing training log.
  fs::remove(runs / "base.seed2" / "train.jsonl");
  // A log that stops before the recorded update (a partial copy).
  write(runs / "base.seed1" / "train.jsonl", training_log(std::log(100.0), 0.25, 3));
  // A run no plan of this study has.
  fs::create_directories(runs / "C3.seed1");
  auto scan = scan_table3_records(records, s);
  EXPECT_TRUE(scan.records.empty());
  ASSERT_EQ(scan.problems.size(), 4u);
  std::string all;
  for (const auto& p : scan.problems) all += p + "\n";
  EXPECT_NE(all.find((runs / "A1.seed1" / "record.json").string() + ": not valid JSON"), std::string::npos) << all;
  EXPECT_NE(all.find((runs / "base.seed2" / "train.jsonl").string() + ": no such file"), std::string::npos) << all;
  EXPECT_NE(
      all.find((runs / "base.seed1" / "train.jsonl").string() + ": the log reaches update 1200, the record says 1600"),
      std::string::npos)
      << all;
  EXPECT_NE(all.find((runs / "C3.seed1").string() + ": not a run of this study's plan"), std::string::npos) << all;

  // A record of another plan, and one in another run's folder.
  fs::remove_all(runs);
  write_table3_record(records, make_table3_record(study, s, "A1.seed1", {}, machine(), "t"),
                      study / "runs" / "A1.seed1" / "train" / "train.jsonl");
  Json j = Json::parse(slurp(runs / "A1.seed1" / "record.json"));
  j["plan"]["steps"] = 3200;
  write(runs / "A1.seed1" / "record.json", j.dump());
  fs::create_directories(runs / "base.seed1");
  fs::copy_file(runs / "A1.seed1" / "train.jsonl", runs / "base.seed1" / "train.jsonl");
  j["plan"]["steps"] = 1600;
  write(runs / "base.seed1" / "record.json", j.dump());  // A1's record in base's folder
  scan = scan_table3_records(records, s);
  EXPECT_TRUE(scan.records.empty());
  all.clear();
  for (const auto& p : scan.problems) all += p + "\n";
  EXPECT_NE(all.find("A1.seed1/record.json: a record of another plan"), std::string::npos) << all;
  EXPECT_NE(all.find("base.seed1/record.json: the record of A1.seed1 is in the folder of base.seed1"),
            std::string::npos)
      << all;
  // A missing key.
  j["name"] = "base.seed1";
  j.erase("machine");
  write(runs / "base.seed1" / "record.json", j.dump());
  EXPECT_NE(message_of([&] {
              read_table3_record(runs / "base.seed1", table3_settings_json(s));
            }).find("base.seed1/record.json: not a whole Table 3 record"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(Table3Record, ARecordsFolderRefusesAnotherPlan) {
  const fs::path dir = testing::fresh_temp_dir("table3_record_plan");
  const Table3Settings s = settings();
  check_records_plan(dir, s);
  EXPECT_EQ(read_table3_settings(dir / "plan.json").training.steps, 1600);
  EXPECT_NO_THROW(check_records_plan(dir, s));  // the same settings: going on
  Table3Settings other = s;
  other.training.steps = 6400;
  const std::string message = message_of([&] { check_records_plan(dir, other); });
  EXPECT_NE(message.find((dir / "plan.json").string() + ": these records were made by another plan"), std::string::npos)
      << message;
  EXPECT_NE(message.find("\"steps\":1600"), std::string::npos) << message;
  EXPECT_NE(message.find("\"steps\":6400"), std::string::npos) << message;
  fs::remove_all(dir);
}

// Two rounds of short trainings by hand: base at 0.2 s then 0.25 s an update, the row at 0.4 then 0.38:
// each side's fastest round, 0.38 / 0.2 = 1.9. The start-up before the first record is left out.
TEST(Table3Record, ThePaceOfARowAgainstBasesFromShortTrainings) {
  const fs::path dir = testing::fresh_temp_dir("table3_record_pace");
  const auto log = [](double startup, double pace) {
    std::ostringstream out;
    out.precision(17);
    for (int step = 10; step <= 60; step += 10)
      out << R"({"type":"train","step":)" << step << R"(,"loss":6,"tokens_per_second":1,"elapsed_seconds":)"
          << startup + (step - 10) * pace << "}\n";
    return out.str();
  };
  write(dir / "base.1" / "train.jsonl", log(30, 0.2));
  write(dir / "row.1" / "train.jsonl", log(5, 0.4));
  write(dir / "base.2" / "train.jsonl", log(1, 0.25));
  write(dir / "row.2" / "train.jsonl", log(9, 0.38));
  const PaceMeasurement p = read_pace_measurement(dir);
  EXPECT_EQ(p.rounds, 2);
  EXPECT_NEAR(p.base_seconds_per_update, 0.2, 1e-12);
  EXPECT_NEAR(p.row_seconds_per_update, 0.38, 1e-12);
  EXPECT_NEAR(p.relative, 1.9, 1e-12);
  fs::remove_all(dir / "row.2");
  EXPECT_NE(message_of([&] { read_pace_measurement(dir); }).find("row.2/train.jsonl: no such file"), std::string::npos);
  write(dir / "row.2" / "train.jsonl", log(9, 0.38).substr(0, 80));  // one record
  EXPECT_NE(message_of([&] { read_pace_measurement(dir); }).find("a pace needs two training records or more"),
            std::string::npos);
  fs::remove_all(dir / "base.1");
  fs::remove_all(dir / "row.1");
  EXPECT_NE(message_of([&] { read_pace_measurement(dir); }).find("no pace measurement"), std::string::npos);
  fs::remove_all(dir);
}

// The report from records written by hand, no run folder anywhere: the table, the machines, the
// pace, the verdicts, the seed spread; a damaged record listed as not counted.
TEST(Table3Record, TheReportComesFromHandWrittenRecordsAlone) {
  const fs::path dir = testing::fresh_temp_dir("table3_record_report");
  const Table3Settings s = settings();
  check_records_plan(dir, s);
  const auto record = [&](const std::string& name, const std::string& row, int seed, double ppl, double bleu,
                          const std::string& cpu, double pace) {
    Json j = {
        {"record", 1},
        {"name", name},
        {"row", row},
        {"seed", seed},
        {"updates", 1600},
        {"plan", table3_settings_json(s)},
        {"config", {{"precision", "fp32"}}},
        {"machine",
         {{"cpu", cpu}, {"cpu_family", 26}, {"cpu_model", 2}, {"cores", 2}, {"avx512_bf16", true}, {"sitting", "s"}}},
        {"precision", "fp32"},
        {"training", {{"seconds", 400}, {"seconds_per_update", 0.25}, {"tokens_per_second", 3000}}},
        {"pace", pace > 0 ? Json{{"relative_to_base", pace},
                                 {"seconds_per_update", 0.5},
                                 {"base_seconds_per_update", 0.25},
                                 {"rounds", 2}}
                          : Json(nullptr)},
        {"dev", {{"cross_entropy", std::log(ppl)}, {"perplexity", ppl}}},
        {"scores", Json::array({{{"name", "BLEU"}, {"score", bleu}}, {{"name", "chrF2"}, {"score", 40}}})},
        {"translations", {{"verses", 400}, {"sha256", "0"}}},
        {"finished", "2026-12-02T07:00:00Z"}};
    write(dir / "runs" / name / "record.json", j.dump(1));
    write(dir / "runs" / name / "train.jsonl", training_log(std::log(ppl), 0.25));
  };
  record("base.seed1", "base", 1, 100, 20, "CPU X", 0);
  record("base.seed2", "base", 2, 102, 19, "CPU Y", 0);
  record("A1.seed1", "A1", 1, 110, 15, "CPU Y", 2);
  const auto counts = write_table3_records_report(dir, "");
  EXPECT_EQ(counts.finished, 3u);
  EXPECT_EQ(counts.planned, 3u);
  EXPECT_TRUE(counts.problems.empty());
  const std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("| base | (base) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 100.00 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| 110.00 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| 15.00 | 2.00× | M2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Machines: M1 CPU X (family 26, model 2), 2 cores; M2 CPU Y (family 26, model 2), 2 cores."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| base | 100.00 | 102.00 | 2.0% |"), std::string::npos) << md;
  // h=1 at +10% against the 2% spread: the paper's way.
  EXPECT_NE(md.find("| a single head is worse than 8 (A) | h=1 110.00 vs h=8 100.00 (+10.0%) | agrees |"),
            std::string::npos)
      << md;
  for (const char* g : {"A", "B", "C", "D", "E"}) {
    EXPECT_TRUE(fs::exists(dir / (std::string("group-") + g + ".svg"))) << g;
    EXPECT_EQ(slurp(dir / (std::string("group-") + g + ".png")).substr(1, 3), "PNG") << g;
  }
  // A damaged record: not counted, and the report says which file and why.
  write(dir / "runs" / "A1.seed1" / "record.json", "{\"record\": 1");
  const auto again = write_table3_records_report(dir, "");
  EXPECT_EQ(again.finished, 2u);
  ASSERT_EQ(again.problems.size(), 1u);
  const std::string md2 = slurp(dir / "report.md");
  EXPECT_NE(md2.find("**Records not counted**"), std::string::npos) << md2;
  EXPECT_NE(md2.find("A1.seed1/record.json: not valid JSON"), std::string::npos) << md2;
  EXPECT_NE(md2.find("| A1 | h=1, d_k=d_v=512 | h=1, d_k=d_v=128 | 1600 | 2.41M | not run |"), std::string::npos)
      << md2;
  fs::remove_all(dir);
}

TEST(Table3Record, TheCostEstimateOrdersTheRows) {
  const Table3Scale scale{2, 2, 4000};
  const ModelConfig base = scaled(table3_row("base").model, scale);
  EXPECT_DOUBLE_EQ(estimated_relative_cost(base, base), 1.0);
  // Twice the layers cost more than base, less than twice (the output layer stays); a wider
  // feed-forward costs more; the same computation in more heads costs the same products.
  const double c3 = estimated_relative_cost(scaled(table3_row("C3").model, scale), base);
  EXPECT_GT(c3, 1.0);
  EXPECT_LT(c3, 2.0);
  EXPECT_GT(estimated_relative_cost(scaled(table3_row("C7").model, scale), base), 1.0);
  EXPECT_LT(estimated_relative_cost(scaled(table3_row("C6").model, scale), base), 1.0);
  EXPECT_DOUBLE_EQ(estimated_relative_cost(scaled(table3_row("A3").model, scale), base), 1.0);
}

}  // namespace
}  // namespace attn::study
