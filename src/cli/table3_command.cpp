// `attn table3`: the paper's Table 3 at small scale. `plan` writes the study as a sweep file
// (scripts/table3 runs it with scripts/sweep); `record` keeps what a finished run measured in the
// records folder (docs/table3/), `done` lists the runs that have a record, `report` writes the
// table, the trend verdicts and one chart per group from the records alone, `status` says where the
// study stands.
#include <ctime>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/given_options.h"
#include "core/error.h"
#include "core/text_file.h"
#include "data/vocabulary.h"
#include "study/table3_record.h"
#include "study/table3_study.h"

namespace attn::cli {
namespace {

namespace fs = std::filesystem;
using study::Table3Preset;
using study::Table3Training;

struct Table3Arguments {
  std::string run, records, name, pace;
  std::string preset = "learnt";
  std::vector<std::string> rows, second_seed;
  std::string vocabulary;
  std::string setup;  // report: a Markdown file describing the data and machine
};

void plan(const Table3Arguments& a, const Table3Preset& preset, bool second_seed_given) {
  const study::Table3Settings s =
      study::table3_settings(preset, a.rows, second_seed_given ? std::optional(a.second_seed) : std::nullopt,
                             data::Vocabulary::load(a.vocabulary).size());
  // The records first: a plan other than theirs is refused before the study's folder is touched.
  if (!a.records.empty()) study::check_records_plan(a.records, s);
  std::cout << study::plan_table3_study(a.run, s).string() << "\n";
}

// The runs with a valid record, comma-separated on one line; records not counted are named on stderr.
void done(const Table3Arguments& a) {
  const auto settings = study::read_table3_settings(fs::path(a.records) / "plan.json");
  const auto scan = study::scan_table3_records(a.records, settings);
  for (const auto& p : scan.problems) std::cerr << "table3: " << p << "; the run is not counted as finished\n";
  std::string names;
  for (const auto& [name, record] : scan.records) names += (names.empty() ? "" : ",") + name;
  std::cout << names << "\n";
}

std::string utc_now() {
  char text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

void record(const Table3Arguments& a) {
  const auto settings = study::read_table3_settings(fs::path(a.run) / "plan.json");
  study::check_records_plan(a.records, settings);
  std::optional<study::PaceMeasurement> pace;
  if (!a.pace.empty()) pace = study::read_pace_measurement(a.pace);
  const auto r = study::make_table3_record(a.run, settings, a.name, pace, study::this_machine(), utc_now());
  study::write_table3_record(a.records, r, fs::path(a.run) / "runs" / a.name / "train" / "train.jsonl");
  std::cout << "recorded " << a.name << " in " << (fs::path(a.records) / "runs" / a.name).string() << ": dev ppl "
            << r.dev_ppl << ", BLEU " << r.bleu
            << (r.pace ? ", pace " + std::to_string(r.pace->relative) + " x base" : std::string()) << "\n";
}

void report(const Table3Arguments& a) {
  const std::string setup = a.setup.empty() ? "" : read_file_bytes(a.setup);
  const auto counts = study::write_table3_records_report(a.records, setup);
  for (const auto& p : counts.problems) std::cerr << "table3: " << p << "; the run is not counted as finished\n";
  std::cout << "wrote " << (fs::path(a.records) / "report.md").string() << " (" << counts.finished << " of "
            << counts.planned << " runs finished) and " << counts.charts << " charts\n";
}

}  // namespace

void add_table3_command(CLI::App& app) {
  auto args = std::make_shared<Table3Arguments>();
  CLI::App* sub = app.add_subcommand("table3",
                                     "The paper's Table 3 at small scale: plan the runs, report their results "
                                     "(scripts/table3 runs everything)");
  sub->require_subcommand(1);
  CLI::App* p = sub->add_subcommand("plan",
                                    "write RUN/plan.json (the settings) and the study as a sweep file, "
                                    "RUN/table3-sweep.json, whose path it prints");
  p->add_option("--run", args->run, "the study's folder")->required();
  p->add_option("--vocabulary", args->vocabulary, "the SentencePiece model the runs train with")->required();
  p->add_option("--records", args->records,
                "the records folder (docs/table3): its plan.json must be these settings (written if missing)");
  p->add_option("--preset", args->preset,
                "the study's scale: learnt (base learns to translate) or quick (800 updates); the options below "
                "change it")
      ->capture_default_str();
  p->add_option("--rows", args->rows, "rows to run, comma-separated (default: every row but big)")->delimiter(',');
  p->add_option("--second-seed", args->second_seed,
                "rows to run again with seed 2, comma-separated (default: the preset's, those of them in --rows)")
      ->delimiter(',');
  // What is not given comes from the preset.
  auto over = std::make_shared<GivenOptions<Table3Preset>>(p);
  const auto training = [&](const std::string& name, auto field, const std::string& help) {
    return over->add(name, &Table3Preset::training, field, help);
  };
  training("--steps", &Table3Training::steps, "updates per run (the paper's 100K)")->check(finite_in(1, 1e7));
  training("--batch-tokens", &Table3Training::batch_tokens, "tokens per batch on each side")->check(finite_in(1, 1e8));
  training("--warmup-steps", &Table3Training::warmup_steps, "learning-rate warmup steps")->check(finite_in(1, 1e7));
  training("--lr-scale", &Table3Training::lr_scale, "factor on the paper's learning rate")->check(finite_in(1e-6, 1e3));
  training("--lr-decay", &Table3Training::lr_decay, "after the warmup: inverse_sqrt (the paper's) or linear (to 0)")
      ->check(CLI::IsMember({"inverse_sqrt", "linear"}));
  training("--bleu-verses", &Table3Training::bleu_verses, "dev verses translated for BLEU (0: all)")
      ->check(finite_in(0, 1e9));
  training("--bleu-pick", &Table3Training::bleu_pick, "which dev verses: first, or spread (evenly over the file)")
      ->check(CLI::IsMember({"first", "spread"}));
  training("--validations", &Table3Training::validations,
           "dev-loss validations per run, evenly spaced (they must divide --steps)")
      ->check(finite_in(1, 1e7));
  over->add("--width-divisor", &Table3Preset::width_divisor, "d_model, d_ff, d_k and d_v divided by this")
      ->check(finite_in(1, 1024));
  over->add("--layer-divisor", &Table3Preset::layer_divisor, "N divided by this (rounded, at least 1)")
      ->check(finite_in(1, 64));
  p->callback([args, over, p] {
    plan(*args, over->applied_to(study::table3_preset(args->preset)), p->count("--second-seed") > 0);
  });
  CLI::App* ps = sub->add_subcommand("preset", "print a preset's settings, one 'key<TAB>value' a line");
  ps->add_option("name", args->preset, "learnt or quick")->required();
  ps->callback([args] { std::cout << study::table3_preset_lines(study::table3_preset(args->preset)); });
  CLI::App* d = sub->add_subcommand("done", "print the runs that have a valid record, comma-separated");
  d->add_option("--records", args->records, "the records folder")->required();
  d->callback([args] { done(*args); });
  CLI::App* rec = sub->add_subcommand(
      "record", "keep what a finished run measured in RECORDS/runs/<name>/ (record.json and its train.jsonl)");
  rec->add_option("--run", args->run, "the study's folder")->required();
  rec->add_option("--records", args->records, "the records folder")->required();
  rec->add_option("--name", args->name, "the run: <row>.seed<k>")->required();
  rec->add_option("--pace", args->pace,
                  "a folder of short trainings side by side, base.<k>/ and row.<k>/ (scripts/table3 makes it): the "
                  "run's pace relative to base's on this machine");
  rec->callback([args] { record(*args); });
  CLI::App* st = sub->add_subcommand("status", "the runs recorded, the run under way and the hours left");
  st->add_option("--run", args->run, "the study's folder")->required();
  st->add_option("--records", args->records, "the records folder")->required();
  st->callback([args] { std::cout << study::table3_status(args->run, args->records); });
  CLI::App* r = sub->add_subcommand(
      "report", "write RECORDS/report.md and RECORDS/group-{A..E}.{svg,png} from the records alone");
  r->add_option("--records", args->records, "the records folder (its plan.json and runs/)")->required();
  r->add_option("--setup", args->setup, "a Markdown file describing the data and the machine, placed after the title");
  r->callback([args] { report(*args); });
}

}  // namespace attn::cli
