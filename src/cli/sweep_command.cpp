// `attn sweep`: many trainings that differ in a few settings (study/sweep.h). `plan` checks a sweep
// file, writes every run's options and lists what scripts/sweep needs; `report` reads the runs back
// into report.md and one chart per varied key.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/text_file.h"
#include "data/vocabulary.h"
#include "study/sweep_report.h"

namespace attn::cli {
namespace {

struct SweepArguments {
  std::string sweep, run, setup, report = "report.md", vocabulary;
};

// Prints, one record a line, tab-separated: "score <average_last> <dev_verses> <dev_pick>", then
// "decoding <label> <beam> <alpha>" per decoding, then "run <name> <vocabulary_size>" per run.
void plan(const SweepArguments& a) {
  const study::SweepPlan plan = study::read_sweep_file(a.sweep);
  if (!a.vocabulary.empty())
    study::check_vocabulary_size(plan, data::Vocabulary::load(a.vocabulary).size(), a.vocabulary);
  study::write_sweep_plan(plan, a.run);
  std::cout << "score\t" << plan.scoring.average_last << "\t" << plan.scoring.dev_verses << "\t"
            << plan.scoring.dev_pick << "\n";
  for (const auto& d : plan.scoring.decodings)
    std::cout << "decoding\t" << d.label() << "\t" << d.beam << "\t" << d.alpha_text() << "\n";
  for (const auto& r : plan.runs) std::cout << "run\t" << r.name << "\t" << r.vocabulary_size << "\n";
}

void report(const SweepArguments& a) {
  const std::string setup = a.setup.empty() ? "" : read_file_bytes(a.setup);
  const auto counts = study::write_sweep_report(a.run, setup, a.report);
  std::cout << "wrote " << a.run << "/" << a.report << ": " << counts.finished << " of " << counts.runs
            << " runs finished, " << counts.diverged << " diverged\n";
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArguments>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Compare training recipes: plan the runs of a sweep file, report them (scripts/sweep runs everything)");
  sub->require_subcommand(1);
  CLI::App* p =
      sub->add_subcommand("plan",
                          "check SWEEP.json, write RUN/sweep.json and every RUN/runs/NAME/options.json; print "
                          "the scoring, the decodings and the runs, one per line");
  p->add_option("--sweep", args->sweep, "the sweep file (docs/sweep.md)")->required();
  p->add_option("--run", args->run, "the sweep's folder")->required();
  p->add_option("--vocabulary", args->vocabulary,
                "the one vocabulary every run will train with: each run's vocabulary_size must be its size");
  p->callback([args] { plan(*args); });
  CLI::App* r =
      sub->add_subcommand("report", "write RUN/report.md (--report) and RUN/knob-*.{svg,png} from the runs so far");
  r->add_option("--run", args->run, "the sweep's folder")->required();
  r->add_option("--setup", args->setup, "a Markdown file describing the data and the machine, placed after the title");
  r->add_option("--report", args->report, "the report's file name in RUN")->capture_default_str();
  r->callback([args] { report(*args); });
}

}  // namespace attn::cli
