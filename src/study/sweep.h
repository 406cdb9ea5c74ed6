#pragma once
// A sweep: many trainings that differ in a few settings, each given the same budget, scored the
// same way on the dev set. One JSON file describes it (docs/sweep.md):
//
//   {"title": "...",
//    "base":     {any attn train option, "preset", "vocabulary_size"},       the settings every run shares
//    "grid":     {"lr_scale": [0.5, 1, 2], "warmup_steps": [400, 800]},      every combination, or/and
//    "variants": [{"name": "deep-enc", "encoder_layers": 6, "decoder_layers": 1}, ...],
//                a variant may also name its own "seeds" and "budget"
//    "budget":   {"updates": 1000} or {"minutes": 45},                       the same for every run
//    "seeds":    2 (seeds 1..2) or [1, 7],
//    "score":    {"average_last": 5, "dev_verses": 400, "dev_pick": "spread", "beam": [4], "alpha": [0.6, 1.0]}}
//
// The runs are every variant (or base alone) times every grid point times every seed. `attn sweep
// plan` writes each run's `attn train` options; scripts/sweep trains, averages and scores them;
// `attn sweep report` reads the folders back (study/sweep_report.h).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::study {

// One way the runs' models translate the dev verses for BLEU and chrF.
struct SweepDecoding {
  int beam = 4;
  double alpha = 0.6;
  // "beam4-alpha0.6": the name of its files in a run folder (dev.<label>.txt, dev.<label>.json).
  std::string label() const;
  std::string alpha_text() const;  // the shortest decimal that reads back as alpha: "0.6", "1"
};

struct SweepScoring {
  int average_last = 1;  // checkpoints averaged into the scored model (1: the last model as it is)
  int dev_verses = 400;  // N dev verses are translated (0: all); perplexity uses all
  // Which N: "first" (lines 1..N), or "spread" (evenly spaced over the file: line floor(k * total / N) + 1
  // for k = 0..N-1), so that a dev set ordered by book is sampled from every book.
  std::string dev_pick = "first";
  std::vector<SweepDecoding> decodings{SweepDecoding{}};  // every pair of beam and alpha; the first ranks
};

struct SweepBudget {
  std::int64_t updates = 0;  // exactly one of the two is > 0
  double minutes = 0;
};

struct SweepRun {
  std::string name;   // its folder: "<point>.seed<k>"
  std::string point;  // what the seeds of one setting share: "lr_scale=0.5,warmup_steps=400", a
                      // variant's name with its grid values, or "base"
  std::uint64_t seed = 1;
  nlohmann::ordered_json values;   // the varied keys and this run's values, as the file gives them
  nlohmann::ordered_json options;  // the `attn train --config` file (no data paths, no run folder)
  SweepBudget budget;              // the sweep's, or its variant's own
  int vocabulary_size = 0;         // the shared BPE pieces it trains with
  double parameters = 0;           // the model's parameter count
};

struct SweepPlan {
  std::string title;
  std::vector<std::string> knobs;  // the varied keys: "variant" first if there are variants, then grid keys
  SweepBudget budget;
  SweepScoring scoring;
  std::vector<std::uint64_t> seeds;
  std::vector<SweepRun> runs;
  nlohmann::ordered_json file;  // the sweep file as read: a study refuses to go on under another
};

// Checks the whole file and expands it. Every run's options are checked as `attn train` checks
// them, so that nothing trains before every run is known to be valid. Throws Error naming
// `source` and the key at fault (an unknown option, a value of the wrong type or out of range, a
// grid or variant list that asks for zero runs, a key both varied and given by a variant).
SweepPlan parse_sweep(const nlohmann::ordered_json& file, const std::string& source);
SweepPlan read_sweep_file(const std::string& path);

// Every run trains with one given vocabulary of `size` pieces (`file`): throws Error naming a run
// whose vocabulary_size differs.
void check_vocabulary_size(const SweepPlan& plan, int size, const std::string& file);

// Writes RUN/sweep.json (the file as read) and each run's RUN/runs/<name>/options.json. A folder
// planned before from another sweep file is refused, naming both: its finished runs would not
// compare with the new ones. Planning again from the same file changes nothing.
void write_sweep_plan(const SweepPlan& plan, const std::filesystem::path& run);
// The plan of a sweep folder, from RUN/sweep.json.
SweepPlan read_planned_sweep(const std::filesystem::path& run);

}  // namespace attn::study
