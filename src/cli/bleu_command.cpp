// `attn bleu HYP REF [REF...]`: corpus BLEU and chrF of a translation file, as sacreBLEU prints them.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/sacrebleu_format.h"
#include "eval/sacrebleu_json.h"
#include "eval/segment_files.h"

namespace attn::cli {

namespace {

struct BleuCommandArgs {
  std::string hypothesis_path;
  std::vector<std::string> reference_paths;
  std::string metrics = "bleu,chrf";
  bool lowercase = false;
  bool json = false;
  int width = 2;
  int chrf_word_order = 0;
};

bool wants(const BleuCommandArgs& args, const std::string& metric) {
  return ("," + args.metrics + ",").find("," + metric + ",") != std::string::npos;
}

void check_metrics(const std::string& metrics) {
  std::size_t start = 0;
  while (start <= metrics.size()) {
    const std::size_t comma = std::min(metrics.find(',', start), metrics.size());
    const std::string metric = metrics.substr(start, comma - start);
    if (metric != "bleu" && metric != "chrf") {
      throw Error("--metrics: unknown metric '" + metric + "' (known: bleu, chrf)");
    }
    start = comma + 1;
  }
}

void run_bleu_command(const BleuCommandArgs& args) {
  check_metrics(args.metrics);
  const std::vector<std::string> hypotheses = eval::read_segments(args.hypothesis_path);
  const eval::ReferenceSets references =
      eval::read_reference_files(args.reference_paths, args.hypothesis_path, hypotheses.size());

  std::vector<std::string> lines;
  std::vector<std::string> signatures;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  if (wants(args, "bleu")) {
    eval::BleuOptions options;
    options.lowercase = args.lowercase;
    const eval::BleuScore score = eval::corpus_bleu(hypotheses, references, options);
    const std::string signature = eval::bleu_signature(options, score.nrefs);
    lines.push_back(eval::format_bleu(score, args.width));
    signatures.push_back("BLEU signature: " + signature);
    json.push_back(eval::bleu_json(score, options, args.width));
  }
  if (wants(args, "chrf")) {
    eval::ChrfOptions options;
    options.lowercase = args.lowercase;
    options.word_order = args.chrf_word_order;
    const eval::ChrfScore score = eval::corpus_chrf(hypotheses, references, options);
    const std::string name = eval::chrf_name(score.beta, score.word_order);
    const std::string signature = eval::chrf_signature(options, score.nrefs);
    lines.push_back(eval::format_chrf(score, args.width));
    signatures.push_back(name + " signature: " + signature);
    json.push_back(eval::chrf_json(score, options, args.width));
  }

  if (args.json) {
    std::cout << json.dump(1) << "\n";
    return;
  }
  for (const std::string& line : lines) std::cout << line << "\n";
  for (const std::string& line : signatures) std::cout << line << "\n";
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
  command->add_flag("--lowercase,-l", args->lowercase, "Case-insensitive scores (Python's str.lower())");
  command->add_option("--metrics,-m", args->metrics, "Metrics to compute, comma-separated: bleu, chrf")
      ->capture_default_str();
  command->add_flag("--json", args->json, "Print sacreBLEU-style JSON (one object per metric, in an array)");
  command->add_option("--width,-w", args->width, "Decimals of the printed scores (sacreBLEU's command line uses 1)")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  command->add_option("--chrf-word-order", args->chrf_word_order, "Word n-gram order of chrF; 2 gives chrF++")
      ->check(CLI::Range(0, 9))
      ->capture_default_str();
  command->callback([args] { run_bleu_command(*args); });
}

}  // namespace attn::cli
