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
#include "core/error.h"
#include "data/vocabulary.h"
#include "study/table3_study.h"

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

void plan(const Table3Arguments& a) {
  study::Table3Settings s;
  s.rows = split_ids(a.rows);
  if (a.second_seed_given) {
    s.second_seed = split_ids(a.second_seed);
  } else {  // the preset's, those of them planned
    for (const auto& id : study::table3_preset(a.preset).second_seed)
      if (s.rows.empty() || std::find(s.rows.begin(), s.rows.end(), id) != s.rows.end()) s.second_seed.push_back(id);
  }
  s.scale = a.scale;
  s.scale.vocab_size = data::Vocabulary::load(a.vocabulary).size();
  s.training = a.training;
  std::cout << study::plan_table3_study(a.run, s).string() << "\n";
}

void report(const Table3Arguments& a) {
  std::string setup;
  if (!a.setup.empty()) {
    std::ifstream in(a.setup);
    if (!in) throw Error(a.setup + ": cannot open");
    std::stringstream s;
    s << in.rdbuf();
    setup = s.str();
  }
  const auto counts = study::write_table3_report(a.run, setup);
  std::cout << "wrote " << (fs::path(a.run) / "report.md").string() << " (" << counts.finished << " of "
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
  p->add_option("--preset", args->preset,
                "the study's scale: learnt (base learns to translate) or quick (800 updates); the options below "
                "change it")
      ->capture_default_str();
  p->add_option("--rows", args->rows, "rows to run, comma-separated (default: every row but big)");
  p->add_option("--second-seed", args->second_seed,
                "rows to run again with seed 2, comma-separated (default: the preset's, those of them in --rows)");
  // Bound to a copy: what is not given comes from the preset.
  auto given = std::make_shared<Table3Training>();
  auto given_scale = std::make_shared<study::Table3Scale>();
  p->add_option("--steps", given->steps, "updates per run (the paper's 100K)")->check(finite_in(1, 1e7));
  p->add_option("--batch-tokens", given->batch_tokens, "tokens per batch on each side")->check(finite_in(1, 1e8));
  p->add_option("--warmup-steps", given->warmup_steps, "learning-rate warmup steps")->check(finite_in(1, 1e7));
  p->add_option("--lr-scale", given->lr_scale, "factor on the paper's learning rate")->check(finite_in(1e-6, 1e3));
  p->add_option("--lr-decay", given->lr_decay, "after the warmup: inverse_sqrt (the paper's) or linear (to 0)")
      ->check(CLI::IsMember({"inverse_sqrt", "linear"}));
  p->add_option("--bleu-verses", given->bleu_verses, "dev verses translated for BLEU (0: all)")
      ->check(finite_in(0, 1e9));
  p->add_option("--bleu-pick", given->bleu_pick, "which dev verses: first, or spread (evenly over the file)")
      ->check(CLI::IsMember({"first", "spread"}));
  p->add_option("--validations", given->validations,
                "dev-loss validations per run, evenly spaced (they must divide --steps)")
      ->check(finite_in(1, 1e7));
  p->add_option("--width-divisor", given_scale->width_divisor, "d_model, d_ff, d_k and d_v divided by this")
      ->check(finite_in(1, 1024));
  p->add_option("--layer-divisor", given_scale->layer_divisor, "N divided by this (rounded, at least 1)")
      ->check(finite_in(1, 64));
  p->callback([args, given, given_scale, p] {
    const study::Table3Preset& preset = study::table3_preset(args->preset);
    args->scale.width_divisor = p->count("--width-divisor") ? given_scale->width_divisor : preset.width_divisor;
    args->scale.layer_divisor = p->count("--layer-divisor") ? given_scale->layer_divisor : preset.layer_divisor;
    Table3Training t = preset.training;
    if (p->count("--steps")) t.steps = given->steps;
    if (p->count("--batch-tokens")) t.batch_tokens = given->batch_tokens;
    if (p->count("--warmup-steps")) t.warmup_steps = given->warmup_steps;
    if (p->count("--lr-scale")) t.lr_scale = given->lr_scale;
    if (p->count("--lr-decay")) t.lr_decay = given->lr_decay;
    if (p->count("--bleu-verses")) t.bleu_verses = given->bleu_verses;
    if (p->count("--bleu-pick")) t.bleu_pick = given->bleu_pick;
    if (p->count("--validations")) t.validations = given->validations;
    args->training = t;
    args->second_seed_given = p->count("--second-seed") > 0;
    plan(*args);
  });
  CLI::App* ps = sub->add_subcommand("preset", "print a preset's settings, one 'key<TAB>value' a line");
  ps->add_option("name", args->preset, "learnt or quick")->required();
  ps->callback([args] { std::cout << study::table3_preset_lines(study::table3_preset(args->preset)); });
  CLI::App* r =
      sub->add_subcommand("report", "write RUN/report.md and RUN/group-{A..E}.{svg,png} from the runs finished so far");
  r->add_option("--run", args->run, "the study's folder")->required();
  r->add_option("--setup", args->setup, "a Markdown file describing the data and the machine, placed after the title");
  r->callback([args] { report(*args); });
}

}  // namespace attn::cli
