#pragma once
// The report of a sweep: every run (not only the best) with its varied values, dev scores, speed
// and size; the settings ranked by their mean over seeds with the seed spread; one chart per
// varied key. Read back from the run folders that scripts/sweep fills:
//
//   runs/<name>/options.json        attn sweep plan
//   runs/<name>/train/              attn train (train.jsonl, checkpoints, model)
//   runs/<name>/diverged.txt        the training stopped on divergence: attn train's message
//   runs/<name>/dev.score.tsv       attn score of the scored model on every dev verse
//   runs/<name>/dev.<label>.json    attn bleu --json of its translation of the dev verses, per decoding
//   runs/<name>/finished            written last: the run is complete
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/learning_curve.h"
#include "study/sweep.h"

namespace attn::study {

struct SweepRunResult {
  enum class Status { unfinished, finished, diverged } status = Status::unfinished;
  std::string diverged_message;               // the line of attn train that says where and why
  std::int64_t updates = 0;                   // the last update the training log or a checkpoint records
  double minutes = 0;                         // training time at that record
  double tokens_per_second = 0;               // median over the log's records, the first (start-up) left out
  double dev_cross_entropy = 0, dev_ppl = 0;  // per target subword, every dev verse, the scored model
  std::vector<CurvePoint> elapsed;            // the training log's records: update -> training seconds
  std::vector<CurvePoint> dev_curve;          // its validations: update -> dev cross-entropy of the training model
  struct Scores {
    double bleu = 0, chrf = 0;
  };
  std::map<std::string, Scores> decodings;  // by SweepDecoding::label()
};

// What a training log (train.jsonl) says of a run: its last update and time, its steady speed, the
// elapsed-time and dev cross-entropy curves (a resumed run's later record of an update counts).
struct TrainingCurves {
  std::int64_t updates = 0;
  double minutes = 0;
  double tokens_per_second = 0;  // steady_tokens_per_second of its records
  std::vector<CurvePoint> elapsed, dev_curve;
};
TrainingCurves read_training_curves(const std::filesystem::path& log_file);

// Reads one run's folder. A run without `finished` or `diverged.txt` is unfinished (what it has
// trained so far is still read, for the report's progress column). Throws Error naming the file
// and line of anything that cannot be read.
SweepRunResult read_sweep_run(const std::filesystem::path& folder, const SweepPlan& plan);

// Corpus cross-entropy from `attn score`'s table (line, log_prob, tokens, ppl): minus the summed
// log-probabilities over the summed tokens. Throws Error naming the file and line.
double score_table_cross_entropy(const std::filesystem::path& tsv);

// The median of a training log's speeds with the first record left out (it includes start-up).
double steady_tokens_per_second(std::vector<double> speeds);

struct SweepPointSummary {
  std::string point;
  std::vector<const SweepRun*> runs;  // its seeds, finished or not
  int finished = 0, diverged = 0;
  double bleu_mean = 0, bleu_min = 0, bleu_max = 0;  // over finished seeds, the first decoding
  double chrf_mean = 0, ppl_mean = 0;
};

// The settings in plan order, each with its seeds' results.
std::vector<SweepPointSummary> summarize(const SweepPlan& plan, const std::map<std::string, SweepRunResult>& results);

struct SweepReportText {
  std::string markdown;                       // report.md
  std::map<std::string, std::string> charts;  // file name (knob-<key>.svg) -> SVG
};

SweepReportText sweep_report(const SweepPlan& plan, const std::map<std::string, SweepRunResult>& results,
                             const std::string& setup);

// Reads every run of the sweep in RUN and writes RUN/<report> (report.md) and RUN/knob-<key>.{svg,png};
// `setup` (Markdown about the data and the machine) goes after the title. Returns the finished
// and diverged counts.
struct SweepReportCounts {
  int runs = 0, finished = 0, diverged = 0;
};
SweepReportCounts write_sweep_report(const std::filesystem::path& run, const std::string& setup,
                                     const std::string& report = "report.md");

}  // namespace attn::study
