#pragma once
// The report of a Table 3 reproduction: what each run measured, read back from its folder, the
// table beside the paper's numbers, the run-to-run spread, which of the paper's trends hold, and
// one chart per group (A-E) of dev perplexity against the knob.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/table3.h"

namespace attn::study {

// What one finished run measured. A run is finished when its folder holds dev.bleu.json (written
// last, by scripts/table3, after the training and the beam search over the dev set).
struct RunResult {
  double dev_cross_entropy = 0;  // nats per target subword, no label smoothing, at the last update
  double dev_ppl = 0;            // exp(dev_cross_entropy)
  double dev_bleu = 0;           // sacreBLEU's score of the beam-4 translation of the dev verses
  double tokens_per_second = 0;  // median of the training log's records (target tokens)
  int steps = 0;                 // the update of the dev measurement
};

// Reads <run_folder>/train/train.jsonl and <run_folder>/dev.bleu.json; nullopt when the run has
// not finished. Throws Error naming the file and line for a log or score that cannot be read, or a
// log without a validation at `steps`.
std::optional<RunResult> read_run_result(const std::filesystem::path& run_folder, int steps);

struct Table3Results {
  std::vector<Table3Run> plan;
  std::map<std::string, RunResult> results;  // by run name, finished runs only
};

// A paper trend and what our runs say about it.
struct TrendVerdict {
  std::string claim;     // "a single head is worse than 8"
  std::string evidence;  // "h=1 6.01 vs h=8 5.83 (+3.1%)"
  std::string verdict;   // "holds", "does not hold", "within the spread", "not run", and for (E),
                         // "no spread measured"
};

// The largest relative dev-perplexity difference between the two seeds of any row run twice
// (0 when none was).
double seed_spread(const Table3Results& r);
std::vector<TrendVerdict> trend_verdicts(const Table3Results& r);

struct Table3ReportText {
  std::string markdown;                       // report.md
  std::map<std::string, std::string> charts;  // file name (group-A.svg ...) -> SVG
};

// `setup` is Markdown describing the data, scale and machine (placed after the title).
Table3ReportText table3_report(const Table3Results& r, const Table3Scale& scale, const Table3Training& training,
                               const std::string& setup);

}  // namespace attn::study
