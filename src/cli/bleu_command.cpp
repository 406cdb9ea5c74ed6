// `attn bleu HYP REF [REF...]`: corpus BLEU and chrF of a translation file, as sacreBLEU prints them.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "eval/sacrebleu_format.h"
#include "eval/sacrebleu_report.h"
#include "eval/segment_files.h"

namespace attn::cli {

namespace {

struct BleuCommandArgs {
  std::string hypothesis_path;
  std::vector<std::string> reference_paths;
  std::string metrics = "bleu,chrf";
  eval::SacrebleuReportOptions report;
  bool json = false;
};

void run_bleu_command(BleuCommandArgs args) {
  args.report.bleu = args.report.chrf = false;
  for (std::size_t start = 0; start <= args.metrics.size();) {
    const std::size_t comma = std::min(args.metrics.find(',', start), args.metrics.size());
    const std::string metric = args.metrics.substr(start, comma - start);
    if (metric != "bleu" && metric != "chrf")
      throw Error("--metrics: unknown metric '" + metric + "' (known: bleu, chrf)");
    (metric == "bleu" ? args.report.bleu : args.report.chrf) = true;
    start = comma + 1;
  }
  const std::vector<std::string> hypotheses = eval::read_segments(args.hypothesis_path);
  const eval::ReferenceSets references =
      eval::read_reference_files(args.reference_paths, args.hypothesis_path, hypotheses.size());
  const eval::SacrebleuReport report = eval::sacrebleu_report(hypotheses, references, args.report);
  std::cout << (args.json ? report.json.dump(1) + "\n" : report.text());
}

}  // namespace

void add_bleu_command(CLI::App& app) {
  auto args = std::make_shared<BleuCommandArgs>();
  CLI::App* command = app.add_subcommand(
      "bleu", "Corpus BLEU and chrF of a translation, computed and printed as sacreBLEU " +
                  std::string(eval::kSacrebleuVersion) + " does (13a tokenizer, exp smoothing, chrF2).");
  command->add_option("HYP", args->hypothesis_path, "The translation, one detokenized segment per line")->required();
  command
      ->add_option("REF", args->reference_paths, "One or more reference files, each with one segment per line of HYP")
      ->required();
  command->add_flag("--lowercase,-l", args->report.lowercase, "Case-insensitive scores (Python's str.lower())");
  command->add_option("--metrics,-m", args->metrics, "Metrics to compute, comma-separated: bleu, chrf")
      ->capture_default_str();
  command->add_flag("--json", args->json, "Print sacreBLEU-style JSON (one object per metric, in an array)");
  command
      ->add_option("--width,-w", args->report.width, "Decimals of the printed scores (sacreBLEU's command line uses 1)")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  command->add_option("--chrf-word-order", args->report.chrf_word_order, "Word n-gram order of chrF; 2 gives chrF++")
      ->check(CLI::Range(0, 9))
      ->capture_default_str();
  command->callback([args] { run_bleu_command(*args); });
}

}  // namespace attn::cli
