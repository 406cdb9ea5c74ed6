// `attn report`: a Markdown report of a training run and its test scores, with the learning
// curve drawn as SVG (train/run_report builds it).
#include <ctime>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "train/run_report.h"

namespace attn::cli {
namespace {

struct ReportArguments {
  std::string run, train_dir, title = RunReportOptions{}.title;
  std::vector<std::string> results;  // "SYSTEM|TEST=bleu.json"
  std::string sample_source, sample_reference;
  std::vector<std::string> samples;  // "SYSTEM=translations"
  int sample_count = RunReportOptions{}.sample_count;
  std::string notes;
};

std::pair<std::string, std::string> split_once(const std::string& s, char sep, const std::string& what) {
  const auto at = s.find(sep);
  if (at == std::string::npos) throw Error(what + ": expected '" + std::string(1, sep) + "' in '" + s + "'");
  return {s.substr(0, at), s.substr(at + 1)};
}

void run(const ReportArguments& args) {
  RunReportOptions o;
  o.run = args.run;
  o.train_dir = args.train_dir;
  o.title = args.title;
  for (const auto& r : args.results) {
    const auto [label, file] = split_once(r, '=', "--result");
    const auto [system, test] = split_once(label, '|', "--result");
    o.results.push_back({system, test, file});
  }
  o.sample_source = args.sample_source;
  o.sample_reference = args.sample_reference;
  for (const auto& s : args.samples) {
    const auto [name, file] = split_once(s, '=', "--sample");
    o.samples.push_back({name, file});
  }
  o.sample_count = args.sample_count;
  o.notes = args.notes;

  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
  const RunReport report = build_run_report(o, date);
  if (report.learning_curve_svg) write_file_atomic(o.run / "learning_curve.svg", *report.learning_curve_svg);
  write_file_atomic(o.run / "report.md", report.markdown);
  std::cout << "wrote " << (o.run / "report.md").string()
            << (report.learning_curve_svg ? " and " + (o.run / "learning_curve.svg").string() : "") << "\n";
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArguments>();
  CLI::App* sub =
      app.add_subcommand("report", "Write a Markdown report (learning curve SVG, scores, samples) of a run");
  sub->add_option("--run", args->run, "folder to write report.md and learning_curve.svg into")->required();
  sub->add_option("--train-dir", args->train_dir, "the attn train run folder (default RUN/train)");
  sub->add_option("--title", args->title, "report title");
  sub->add_option("--result", args->results, "'SYSTEM|TEST SET=scores.json' from attn bleu --json (repeatable)");
  sub->add_option("--sample-source", args->sample_source, "source text for sample translations");
  sub->add_option("--sample-reference", args->sample_reference, "reference translations for the samples");
  sub->add_option("--sample", args->samples, "'SYSTEM=translations' (repeatable)");
  sub->add_option("--sample-count", args->sample_count, "how many samples")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  sub->add_option("--notes", args->notes, "a Markdown file appended to the report");
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
