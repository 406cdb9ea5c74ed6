#pragma once
// The report of a Table 3 reproduction: what each run measured, read back from its folder, the
// table beside the paper's numbers, the run-to-run spread, which of the paper's trends hold, and
// one chart per group (A-E) of dev perplexity against the knob.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/learning_curve.h"
#include "study/sweep.h"
#include "study/table3.h"

namespace attn::study {

// What one finished run measured.
struct RunResult {
  double dev_cross_entropy = 0;       // nats per target subword over every dev verse, the last model
  double dev_ppl = 0;                 // exp(dev_cross_entropy)
  double dev_bleu = 0;                // sacreBLEU's score of the beam-4 translation of the dev verses
  double tokens_per_second = 0;       // median of the training log's records (target tokens)
  int steps = 0;                      // the updates it trained
  double training_seconds = 0;        // the training log's time at its last update
  double seconds_per_update = 0;      // its pace in base's updates (base: 1), measured beside base on its own
                                      // machine (table3_record.h); 0: not measured, not read at equal time
  std::string machine;                // the machine it finished on (machine_text)
  std::vector<CurvePoint> dev_curve;  // update -> dev cross-entropy, the log's validations
};

// How much the run's dev perplexity moved over its last quarter of updates (learning_curve.h);
// nullopt without validations at 3/4 and at the end.
std::optional<double> last_quarter_change(const RunResult& run);

// The run at the training time base takes for its updates (`base_seconds`: its steps times its
// steady pace), the paper's other fair reading on a CPU. A run slower than base (its steps at its
// steady pace take more than 2% longer) is read from its learning curve at the update its pace
// reaches in base's time (`read_earlier`); a run as fast or faster keeps its value at its last
// update: at equal time it would have trained longer, so its value is an upper bound. nullopt when
// the curve does not reach back to that update.
struct EqualTimeReading {
  double update = 0, dev_ppl = 0;
  bool read_earlier = false;
};
std::optional<EqualTimeReading> equal_time_reading(const RunResult& run, double base_seconds);

struct Table3Results {
  std::vector<Table3Run> plan;
  std::map<std::string, RunResult> results;  // by run name, finished runs only
};

// What one reading (perplexity or BLEU at equal updates, perplexity at equal time) says about a trend.
struct TrendReading {
  std::string evidence;  // "h=1 6.01 vs h=8 5.83 (+3.1%)"
  std::string verdict;   // "agrees", "disagrees", "within the spread", "not run", "not measured" (no pace for
                         // equal time), and for (E), a claim of equality: "agrees" within the spread,
                         // "disagrees" beyond it, "no spread measured"
};

// A paper trend and what our runs say about it, in three readings.
struct TrendVerdict {
  std::string claim;  // "a single head is worse than 8"
  TrendReading ppl, bleu, equal_time;
};

// The largest relative dev-perplexity difference between the two seeds of any row run twice
// (0 when none was), and the largest BLEU difference in points.
double seed_spread(const Table3Results& r);
double seed_spread_bleu(const Table3Results& r);
std::vector<TrendVerdict> trend_verdicts(const Table3Results& r);

struct Table3ReportText {
  std::string markdown;                       // report.md
  std::map<std::string, std::string> charts;  // file name (group-A.svg ...) -> SVG
};

// `setup` is Markdown describing the data, scale and machine (placed after the title).
Table3ReportText table3_report(const Table3Results& r, const Table3Scale& scale, const Table3Training& training,
                               const std::string& setup);

}  // namespace attn::study
