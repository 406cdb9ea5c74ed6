// `attn table3`: the paper's Table 3 at small scale. `plan` writes the study as a sweep file
// (scripts/table3 runs it with scripts/sweep); `report` reads what the runs measured and writes the
// table, the trend verdicts and one chart per group.
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/given_options.h"
#include "core/error.h"
#include "core/text_file.h"
#include "data/vocabulary.h"
#include "study/table3_study.h"

namespace attn::cli {
namespace {

namespace fs = std::filesystem;
using study::Table3Preset;
using study::Table3Training;

struct Table3Arguments {
  std::string run;
  std::string preset = "learnt";
  std::vector<std::string> rows, second_seed;
  std::string vocabulary;
  std::string setup;  // report: a Markdown file describing the data and machine
};

void plan(const Table3Arguments& a, const Table3Preset& preset, bool second_seed_given) {
  const study::Table3Settings s =
      study::table3_settings(preset, a.rows, second_seed_given ? std::optional(a.second_seed) : std::nullopt,
                             data::Vocabulary::load(a.vocabulary).size());
  std::cout << study::plan_table3_study(a.run, s).string() << "\n";
}

void report(const Table3Arguments& a) {
  const std::string setup = a.setup.empty() ? "" : read_file_bytes(a.setup);
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
  CLI::App* r =
      sub->add_subcommand("report", "write RUN/report.md and RUN/group-{A..E}.{svg,png} from the runs finished so far");
  r->add_option("--run", args->run, "the study's folder")->required();
  r->add_option("--setup", args->setup, "a Markdown file describing the data and the machine, placed after the title");
  r->callback([args] { report(*args); });
}

}  // namespace attn::cli
