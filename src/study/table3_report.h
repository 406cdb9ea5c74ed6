#pragma once
// The report of a Table 3 reproduction: what each run measured, read back from its folder, the
// table beside the paper's numbers, the run-to-run spread, which of the paper's trends hold, and
// one chart per group (A-E) of dev perplexity against the knob.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/sweep.h"
#include "study/table3.h"

namespace attn::study {

// What one finished run measured.
struct RunResult {
  double dev_cross_entropy = 0;  // nats per target subword over every dev verse, the last model
  double dev_ppl = 0;            // exp(dev_cross_entropy)
  double dev_bleu = 0;           // sacreBLEU's score of the beam-4 translation of the dev verses
  double tokens_per_second = 0;  // median of the training log's records (target tokens)
  int steps = 0;                 // the updates it trained
};

// What the run of the study's sweep (scripts/sweep fills study/runs/<id>.seed<k>, study/sweep_report.h)
// measured; nullopt while it has not finished. Throws Error naming the file of anything that cannot
// be read, and for a diverged run.
std::optional<RunResult> read_run_result(const std::filesystem::path& study, const SweepPlan& sweep,
                                         const Table3Run& run);

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
