#pragma once
// The Markdown report of a training run (`attn report`): its training figures and learning curve
// from train.jsonl, test scores from `attn bleu --json` files, sample translations.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// train.jsonl's records, by type, in file order.
struct TrainingLog {
  std::vector<nlohmann::json> train, valid;
  bool torn_last_line = false;  // an unfinished last record was left out
};

// Reads train.jsonl. A line that is not a JSON object, or a record whose step, loss,
// cross-entropy, speed or time is missing or not a number (or whose BLEU, epoch or token count is
// not one), throws attn::Error naming the file and line; blank lines are skipped. The one
// exception: a last line that is not JSON and has no line end (a run killed while writing it) is
// left out, and torn_last_line says so.
TrainingLog read_training_log(const std::filesystem::path& path);

// Keeps the records of train.jsonl up to `step` (and drops torn ones): a resumed run rewrites what
// came after its checkpoint, so the log never shows steps twice. Nothing to do for a missing file.
void truncate_training_log(const std::filesystem::path& path, std::int64_t step);

struct RunReport {
  std::string markdown;
  std::optional<std::string> learning_curve_svg;  // none for a run shorter than one log interval
};

// Builds the report; `date` goes into its first lines. Throws attn::Error naming any file at fault.
RunReport build_run_report(const RunReportOptions& options, const std::string& date);

}  // namespace attn
