// `attn table3`: the paper's Table 3 at small scale. `plan` writes the study as a sweep file
// (scripts/table3 runs it with scripts/sweep); `report` reads what the runs measured and writes the
// table, the trend verdicts and one chart per group.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_file.h"
#include "data/vocabulary.h"
#include "inspect/png_render.h"
#include "study/table3_report.h"

namespace attn::cli {
namespace {

namespace fs = std::filesystem;
using study::Table3Scale;
using study::Table3Training;

struct Table3Arguments {
  std::string run;
  std::string preset = "learnt";
  std::vector<std::string> rows, second_seed;
  bool second_seed_given = false;
  std::string vocabulary;
  Table3Scale scale;
  Table3Training training;
  std::string setup;  // report: a Markdown file describing the data and machine
};

std::vector<std::string> split_ids(const std::vector<std::string>& items) {
  std::vector<std::string> ids;
  for (const auto& item : items) {
    std::stringstream s(item);
    for (std::string id; std::getline(s, id, ',');)
      if (!id.empty()) ids.push_back(id);
  }
  return ids;
}

nlohmann::json settings_json(const Table3Arguments& a, const std::vector<std::string>& rows,
                             const std::vector<std::string>& second_seed) {
  return {{"rows", rows},
          {"second_seed", second_seed},
          {"width_divisor", a.scale.width_divisor},
          {"layer_divisor", a.scale.layer_divisor},
          {"vocab_size", a.scale.vocab_size},
          {"steps", a.training.steps},
          {"batch_tokens", a.training.batch_tokens},
          {"warmup_steps", a.training.warmup_steps},
          {"lr_scale", a.training.lr_scale},
          {"bleu_verses", a.training.bleu_verses},
          {"bleu_pick", a.training.bleu_pick},
          {"validations", a.training.validations}};
}

// The study's settings as `plan` recorded them in RUN/plan.json (the thread count is not one of them:
// a study may go on with another, given to scripts/table3).
void read_settings(const fs::path& file, Table3Arguments& a, std::vector<std::string>& rows,
                   std::vector<std::string>& second_seed) {
  const nlohmann::json j = read_json_file(file.string(), "the Table 3 plan");
  try {
    rows = j.at("rows").get<std::vector<std::string>>();
    second_seed = j.at("second_seed").get<std::vector<std::string>>();
    a.scale.width_divisor = j.at("width_divisor").get<int>();
    a.scale.layer_divisor = j.at("layer_divisor").get<int>();
    a.scale.vocab_size = j.at("vocab_size").get<int>();
    a.training.steps = j.at("steps").get<int>();
    a.training.batch_tokens = j.at("batch_tokens").get<int>();
    a.training.warmup_steps = j.at("warmup_steps").get<int>();
    a.training.lr_scale = j.at("lr_scale").get<double>();
    a.training.bleu_verses = j.at("bleu_verses").get<int>();
    // Studies planned before these settings existed: the first verses, one validation.
    a.training.bleu_pick = j.value("bleu_pick", std::string("first"));
    a.training.validations = j.value("validations", 1);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.string() + ": not a Table 3 plan (" + e.what() + ")");
  }
}

void plan(Table3Arguments a) {
  const fs::path run = a.run, plan_file = run / "plan.json";
  const auto rows = split_ids(a.rows);
  std::vector<std::string> second_seed;
  if (a.second_seed_given) {
    second_seed = split_ids(a.second_seed);
  } else {  // the preset's, those of them planned
    for (const auto& id : study::table3_preset(a.preset).second_seed)
      if (rows.empty() || std::find(rows.begin(), rows.end(), id) != rows.end()) second_seed.push_back(id);
  }
  a.scale.vocab_size = data::Vocabulary::load(a.vocabulary).size();
  const auto runs = study::table3_plan(rows, second_seed, a.scale, a.training);
  const nlohmann::json settings = settings_json(a, rows, second_seed);
  if (fs::exists(plan_file)) {
    // An interrupted study goes on only with the settings it started with: its finished runs
    // would not be comparable with new ones otherwise.
    const nlohmann::json before = read_json_file(plan_file.string(), "the Table 3 plan");
    if (before != settings)
      throw Error(plan_file.string() + ": this study was planned with other settings (" + before.dump() + "; now " +
                  settings.dump() + "): use another --run folder, or the same settings");
  } else {
    fs::create_directories(run);
    write_file_atomic(plan_file, settings.dump(1) + "\n");
  }
  const fs::path sweep = run / "table3-sweep.json";
  write_file_atomic(sweep, study::table3_sweep(runs, a.training, a.scale.vocab_size).dump(1) + "\n");
  std::cout << sweep.string() << "\n";
}

void report(Table3Arguments a) {
  const fs::path run = a.run;
  std::vector<std::string> rows, second_seed;
  read_settings(run / "plan.json", a, rows, second_seed);
  study::Table3Results results;
  results.plan = study::table3_plan(rows, second_seed, a.scale, a.training);
  if (fs::exists(run / "sweep.json")) {
    const study::SweepPlan sweep = study::read_planned_sweep(run);
    for (const auto& r : results.plan)
      if (auto result = study::read_run_result(run, sweep, r)) results.results[r.name] = *result;
  }
  std::string setup;
  if (!a.setup.empty()) {
    std::ifstream in(a.setup);
    if (!in) throw Error(a.setup + ": cannot open");
    std::stringstream s;
    s << in.rdbuf();
    setup = s.str();
  }
  const auto text = study::table3_report(results, a.scale, a.training, setup);
  for (const auto& [name, svg] : text.charts) {
    write_file_atomic(run / name, svg);
    const std::string png = fs::path(name).replace_extension(".png").string();
    write_file_atomic(run / png, inspect::render_png(svg, 1.5, (run / name).string()));
  }
  write_file_atomic(run / "report.md", text.markdown);
  std::cout << "wrote " << (run / "report.md").string() << " (" << results.results.size() << " of "
            << results.plan.size() << " runs finished) and " << text.charts.size() << " charts\n";
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
  p->add_option("--preset", args->preset,
                "the study's scale: learnt (base learns to translate) or quick (800 updates); the options below "
                "change it")
      ->capture_default_str();
  p->add_option("--rows", args->rows, "rows to run, comma-separated (default: every row but big)");
  p->add_option("--second-seed", args->second_seed,
                "rows to run again with seed 2, comma-separated (default: the preset's, those of them in --rows)");
  // Bound to a copy: what is not given comes from the preset.
  auto given = std::make_shared<Table3Training>();
  p->add_option("--steps", given->steps, "updates per run (the paper's 100K)")->check(finite_in(1, 1e7));
  p->add_option("--batch-tokens", given->batch_tokens, "tokens per batch on each side")->check(finite_in(1, 1e8));
  p->add_option("--warmup-steps", given->warmup_steps, "learning-rate warmup steps")->check(finite_in(1, 1e7));
  p->add_option("--lr-scale", given->lr_scale, "factor on the paper's learning rate")->check(finite_in(1e-6, 1e3));
  p->add_option("--bleu-verses", given->bleu_verses, "dev verses translated for BLEU (0: all)")
      ->check(finite_in(0, 1e9));
  p->add_option("--bleu-pick", given->bleu_pick, "which dev verses: first, or spread (evenly over the file)")
      ->check(CLI::IsMember({"first", "spread"}));
  p->add_option("--validations", given->validations,
                "dev-loss validations per run, evenly spaced (they must divide --steps)")
      ->check(finite_in(1, 1e7));
  p->add_option("--width-divisor", args->scale.width_divisor, "d_model, d_ff, d_k and d_v divided by this")
      ->capture_default_str()
      ->check(finite_in(1, 1024));
  p->add_option("--layer-divisor", args->scale.layer_divisor, "N divided by this (rounded, at least 1)")
      ->capture_default_str()
      ->check(finite_in(1, 64));
  p->callback([args, given, p] {
    Table3Training t = study::table3_preset(args->preset).training;
    if (p->count("--steps")) t.steps = given->steps;
    if (p->count("--batch-tokens")) t.batch_tokens = given->batch_tokens;
    if (p->count("--warmup-steps")) t.warmup_steps = given->warmup_steps;
    if (p->count("--lr-scale")) t.lr_scale = given->lr_scale;
    if (p->count("--bleu-verses")) t.bleu_verses = given->bleu_verses;
    if (p->count("--bleu-pick")) t.bleu_pick = given->bleu_pick;
    if (p->count("--validations")) t.validations = given->validations;
    args->training = t;
    args->second_seed_given = p->count("--second-seed") > 0;
    plan(*args);
  });
  CLI::App* ps = sub->add_subcommand("preset", "print a preset's settings, one 'key<TAB>value' a line");
  ps->add_option("name", args->preset, "learnt or quick")->required();
  ps->callback([args] {
    const study::Table3Preset& p = study::table3_preset(args->preset);
    std::cout << "vocab_size\t" << p.vocab_size << "\nsteps\t" << p.training.steps << "\nbatch_tokens\t"
              << p.training.batch_tokens << "\nwarmup_steps\t" << p.training.warmup_steps << "\nlr_scale\t"
              << p.training.lr_scale << "\nbleu_verses\t" << p.training.bleu_verses << "\nbleu_pick\t"
              << p.training.bleu_pick << "\nvalidations\t" << p.training.validations << "\nsecond_seed\t";
    for (std::size_t i = 0; i < p.second_seed.size(); ++i) std::cout << (i ? "," : "") << p.second_seed[i];
    std::cout << "\n";
  });
  CLI::App* r =
      sub->add_subcommand("report", "write RUN/report.md and RUN/group-{A..E}.{svg,png} from the runs finished so far");
  r->add_option("--run", args->run, "the study's folder")->required();
  r->add_option("--setup", args->setup, "a Markdown file describing the data and the machine, placed after the title");
  r->callback([args] { report(*args); });
}

}  // namespace attn::cli
