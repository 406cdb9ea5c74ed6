#pragma once
// The Markdown report of a training run (`attn report`): its training figures and learning curve
// from train.jsonl, test scores from `attn bleu --json` files, sample translations.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "train/train_log.h"  // read_training_log, which the report reads train.jsonl with

namespace attn {

struct RunReportOptions {
  std::filesystem::path run;        // where report.md and learning_curve.svg go
  std::filesystem::path train_dir;  // the `attn train` run folder; empty: run/train
  std::string title = "attn translation run";
  struct Result {
    std::string system, test_set;
    std::filesystem::path scores;  // written by attn bleu --json
  };
  std::vector<Result> results;
  std::filesystem::path sample_source, sample_reference;  // samples need a source; the reference is optional
  struct Sample {
    std::string system;
    std::filesystem::path translations;  // one line per line of sample_source
  };
  std::vector<Sample> samples;
  int sample_count = 3;
  std::filesystem::path notes;  // a Markdown file appended as it is
};

struct RunReport {
  std::string markdown;
  std::optional<std::string> learning_curve_svg;  // none for a run shorter than one log interval
};

// Builds the report; `date` goes into its first lines. Throws attn::Error naming any file at fault.
RunReport build_run_report(const RunReportOptions& options, const std::string& date);

}  // namespace attn
