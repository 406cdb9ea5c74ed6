#pragma once
// The paper's Table 3 (Vaswani et al., 2017, "Variations on the Transformer architecture"): every
// row as a model configuration with the paper's own results, the rule that scales the rows down to
// what a small machine trains in minutes, and the training plan `scripts/table3` runs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model_config.h"

namespace attn::study {

// What the paper reports for a row: dev perplexity per wordpiece and dev BLEU on newstest2013
// (English-German), parameters in millions (0 where the paper leaves the cell empty).
struct PaperResult {
  double ppl = 0, bleu = 0, params_millions = 0;
};

struct Table3Row {
  std::string id;      // "base", "A1".."A4", "B1", "B2", "C1".."C7", "D1".."D4", "E1", "big"
  std::string group;   // "base", "A".."E", "big"
  std::string change;  // the row's cells that differ from base, as the paper prints them
  std::string knob;    // what the row varies: "h", "d_k", "N", "d_model", "d_ff", "P_drop", "eps_ls",
                       // "positions" (base: "")
  ModelConfig model;   // the paper's sizes (vocab_size: its shared 37000-token BPE vocabulary)
  int paper_steps = 100000;
  PaperResult paper;
};

// Every row, in the paper's order: base, (A), (B), (C), (D), (E), big.
std::vector<Table3Row> table3_rows();
const Table3Row& table3_row(const std::string& id);  // throws Error naming the known ids

// The value of the row's knob in `c` (positions: 0 sinusoidal, 1 learned).
double knob_value(const std::string& knob, const ModelConfig& c);

// How the paper's sizes are scaled down. Widths (d_model, d_ff, d_k, d_v) are divided by
// width_divisor and layer counts by layer_divisor (rounded, at least 1); heads, dropout, label
// smoothing and positions stay as the paper has them, so every row keeps its place relative to
// base: (A) keeps h x d_k = d_model, (C)'s N = 2/4/8 become 1/2/4 around base's 3.
struct Table3Scale {
  int width_divisor = 4;
  int layer_divisor = 2;
  int vocab_size = 8000;  // the vocabulary the runs share (the main job's BPE)
};
ModelConfig scaled(const ModelConfig& paper, const Table3Scale& scale);

// The training every run shares: the same number of updates for every row, as the paper did.
struct Table3Training {
  int steps = 800;                        // updates per row (the paper: 100K; big 300K, scaled alike)
  int batch_tokens = 1024;                // source and target tokens per batch (the paper: ~25000)
  int warmup_steps = 200;                 // the paper's schedule, warmup shortened with the run
  double lr_scale = 0.5;                  // on the paper's d_model^-0.5 rate
  std::string lr_decay = "inverse_sqrt";  // after the warmup: the paper's, or "linear" down to 0 at the last update
  int bleu_verses = 400;                  // dev verses translated for BLEU (0: all of them)
  std::string bleu_pick = "first";        // which: "first" or "spread" (evenly over the file; study/sweep.h)
  int validations = 1;                    // dev-loss validations per run, evenly spaced, the last at the last update:
                                          // the learning curves that the convergence check and the equal-time
                                          // reading use
};

// A named scale of the study (`scripts/table3 --preset NAME`): the vocabulary size, the training, the
// rows trained with a second seed (those of them planned).
struct Table3Preset {
  std::string name, description;
  int vocab_size = 0;
  int width_divisor = 4, layer_divisor = 2;  // Table3Scale's
  Table3Training training;
  std::vector<std::string> rows;  // the rows planned when none are named (empty: every row but big)
  std::vector<std::string> second_seed;
};
// "learnt" (the default: base learns to translate and its dev perplexity settles) and "quick" (800
// updates, the first study: how fast each row starts to learn).
const std::vector<Table3Preset>& table3_presets();
const Table3Preset& table3_preset(const std::string& name);  // throws Error naming the presets
// Its settings, one "key<TAB>value" a line (`attn table3 preset NAME`; scripts/table3 reads vocab_size).
std::string table3_preset_lines(const Table3Preset& p);

// One run of the plan: a row with a seed, named "<id>" for seed 1, "<id>-seed<k>" in the report; its
// folder is the sweep's, runs/<id>.seed<k>.
struct Table3Run {
  std::string name;
  const Table3Row* row = nullptr;
  int seed = 1;
  ModelConfig model;  // scaled
  int steps = 0;      // the paper's steps scaled like the base row's
};

// The runs for `ids` (empty: every row but big, whose 300K updates at the scaled rate cost as much
// as three base rows; ask for it by id), then a second seed of each of `second_seed_ids` (each must
// be one of the planned rows). Throws Error naming an unknown id, a run asked for twice.
std::vector<Table3Run> table3_plan(const std::vector<std::string>& ids, const std::vector<std::string>& second_seed_ids,
                                   const Table3Scale& scale, const Table3Training& training);

// The study as a sweep file (study/sweep.h) that scripts/sweep runs: the training every row shares as
// the base (schedule, batches, fp32, a validation at the last update), one variant per row named by
// its id with the row's model, its seeds (1, and 2 for the rows asked for) and, for big, its own
// budget; scored by the last model (no averaging, as the paper for Table 3) on the first
// bleu_verses dev verses with beam 4 and α 0.6.
nlohmann::ordered_json table3_sweep(const std::vector<Table3Run>& plan, const Table3Training& training,
                                    int vocabulary_size);

// The sweep's name of a run: "<id>.seed<k>", its folder under runs/.
std::string sweep_run_name(const Table3Run& run);

}  // namespace attn::study
