#include "study/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/text_file.h"
#include "core/number_format.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "eval/sacrebleu_format.h"
#include "eval/sacrebleu_json.h"
#include "inspect/png_render.h"
#include "inspect/svg_chart.h"
#include "train/checkpoint.h"
#include "train/train_log.h"

namespace attn::study {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string first_line_of(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  // attn train's last words name the divergence: keep the line that says so, else the last line.
  while (std::getline(in, line)) {
    if (line.find("diverged") != std::string::npos) return line;
    if (!line.empty()) last = line;
  }
  return last;
}

std::string budget_text(const SweepBudget& b) {
  return b.updates > 0 ? std::to_string(b.updates) + " updates" : format_fixed(b.minutes, 1) + " minutes of training";
}

bool all_numeric(const std::vector<Json>& values) {
  return std::all_of(values.begin(), values.end(), [](const Json& v) { return v.is_number(); });
}

}  // namespace

double steady_tokens_per_second(std::vector<double> speeds) {
  if (speeds.empty()) return 0;
  if (speeds.size() >= 2) speeds.erase(speeds.begin());
  std::sort(speeds.begin(), speeds.end());
  const std::size_t n = speeds.size();
  return n % 2 ? speeds[n / 2] : (speeds[n / 2 - 1] + speeds[n / 2]) / 2;
}

double score_table_cross_entropy(const fs::path& tsv) {
  std::ifstream in(tsv);
  if (!in) throw_in(tsv.string(), "cannot open (attn score's table of the dev verses)");
  std::string text;
  double log_prob = 0;
  long long tokens = 0;
  int rows = 0;
  for (std::size_t line = 1; read_line(in, text); ++line) {
    if (line == 1) {
      if (text != "line\tlog_prob\ttokens\tppl")
        throw_at(tsv.string(), line, "expected attn score's header 'line<TAB>log_prob<TAB>tokens<TAB>ppl'");
      continue;
    }
    if (text.empty()) continue;
    std::istringstream s(text);
    std::string id, lp, tk;
    if (!std::getline(s, id, '\t') || !std::getline(s, lp, '\t') || !std::getline(s, tk, '\t'))
      throw_at(tsv.string(), line, "expected 4 tab-separated columns");
    char* end = nullptr;
    const double l = std::strtod(lp.c_str(), &end);
    if (lp.empty() || *end || !std::isfinite(l) || l > 0)
      throw_at(tsv.string(), line, "log_prob '" + lp + "' is not a finite number <= 0");
    const long long t = std::strtoll(tk.c_str(), &end, 10);
    if (tk.empty() || *end || t < 1) throw_at(tsv.string(), line, "tokens '" + tk + "' is not a whole number >= 1");
    log_prob += l;
    tokens += t;
    ++rows;
  }
  if (rows == 0) throw_in(tsv.string(), "no scored sentence");
  return -log_prob / static_cast<double>(tokens);
}

TrainingCurves read_training_curves(const fs::path& log_file) {
  TrainingCurves r;
  const TrainingLog log = read_training_log(log_file);
  std::vector<double> speeds;
  for (const auto& t : log.train) {
    speeds.push_back(t.tokens_per_second);
    r.updates = std::max<std::int64_t>(r.updates, t.step);
    r.minutes = std::max(r.minutes, t.elapsed_seconds / 60);
    r.elapsed.push_back({t.step, t.elapsed_seconds});
  }
  for (const auto& v : log.valid) {
    r.updates = std::max<std::int64_t>(r.updates, v.step);
    r.dev_curve.push_back({v.step, v.cross_entropy});
  }
  // A resumed run logs again the updates after its checkpoint: the later record of an update counts.
  for (auto* c : {&r.elapsed, &r.dev_curve}) {
    std::stable_sort(c->begin(), c->end(), [](const CurvePoint& a, const CurvePoint& b) { return a.step < b.step; });
    std::vector<CurvePoint> kept;
    for (const auto& p : *c) {
      if (!kept.empty() && kept.back().step == p.step) kept.pop_back();
      kept.push_back(p);
    }
    *c = std::move(kept);
  }
  r.tokens_per_second = steady_tokens_per_second(speeds);
  return r;
}

SweepRunResult read_sweep_run(const fs::path& folder, const SweepPlan& plan) {
  SweepRunResult r;
  const fs::path log_file = folder / "train" / "train.jsonl";
  if (fs::exists(log_file)) {
    TrainingCurves c = read_training_curves(log_file);
    r.updates = c.updates;
    r.minutes = c.minutes;
    r.tokens_per_second = c.tokens_per_second;
    r.elapsed = std::move(c.elapsed);
    r.dev_curve = std::move(c.dev_curve);
  }
  // train.jsonl has a record every log_every updates, and a time budget stops a run between two:
  // its last update is the step of its last checkpoint, saved where it stopped.
  if (const auto checkpoints = list_checkpoints(folder / "train" / "checkpoints"); !checkpoints.empty())
    r.updates = std::max(r.updates, checkpoint_step(checkpoints.back()));  // the list is in update order
  if (fs::exists(folder / "diverged.txt")) {
    r.status = SweepRunResult::Status::diverged;
    r.diverged_message = first_line_of(folder / "diverged.txt");
    return r;
  }
  if (!fs::exists(folder / "finished")) return r;
  r.dev_cross_entropy = score_table_cross_entropy(folder / "dev.score.tsv");
  r.dev_ppl = std::exp(r.dev_cross_entropy);
  for (const auto& d : plan.scoring.decodings) {
    const fs::path file = folder / ("dev." + d.label() + ".json");
    SweepRunResult::Scores s;
    bool bleu = false, chrf = false;
    for (const eval::ScoreRecord& score : eval::read_score_file(file)) {
      if (score.name == "BLEU") s.bleu = score.score, bleu = true;
      if (score.name == "chrF2") s.chrf = score.score, chrf = true;
    }
    if (!bleu || !chrf) throw_in(file.string(), "expected BLEU and chrF2 (the output of attn bleu --json)");
    r.decodings[d.label()] = s;
  }
  r.status = SweepRunResult::Status::finished;
  return r;
}

std::vector<SweepPointSummary> summarize(const SweepPlan& plan, const std::map<std::string, SweepRunResult>& results) {
  std::vector<SweepPointSummary> out;
  const std::string first = plan.scoring.decodings.front().label();
  for (const auto& run : plan.runs) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.point == run.point; });
    if (it == out.end()) {
      out.push_back({});
      out.back().point = run.point;
      it = out.end() - 1;
    }
    it->runs.push_back(&run);
  }
  for (auto& p : out) {
    std::vector<double> bleu;
    double chrf = 0, ppl = 0;
    for (const SweepRun* run : p.runs) {
      auto r = results.find(run->name);
      if (r == results.end()) continue;
      if (r->second.status == SweepRunResult::Status::diverged) ++p.diverged;
      if (r->second.status != SweepRunResult::Status::finished) continue;
      ++p.finished;
      const auto& s = r->second.decodings.at(first);
      bleu.push_back(s.bleu);
      chrf += s.chrf;
      ppl += r->second.dev_ppl;
    }
    if (bleu.empty()) continue;
    const double n = static_cast<double>(bleu.size());
    for (double b : bleu) p.bleu_mean += b / n;
    p.bleu_min = *std::min_element(bleu.begin(), bleu.end());
    p.bleu_max = *std::max_element(bleu.begin(), bleu.end());
    p.chrf_mean = chrf / n;
    p.ppl_mean = ppl / n;
  }
  return out;
}

namespace {

using Status = SweepRunResult::Status;

// The title, the setup and what every run did: its budget, the dev verses scored and how.
void write_setup(std::ostream& md, const SweepPlan& plan, const std::string& setup) {
  const auto& decodings = plan.scoring.decodings;
  md << "# " << (plan.title.empty() ? "Sweep" : plan.title) << "\n\n";
  if (!setup.empty()) md << setup << "\n";
  std::string own;  // the variants with a budget of their own
  for (const auto& run : plan.runs)
    if ((run.budget.updates != plan.budget.updates || run.budget.minutes != plan.budget.minutes) &&
        own.find(run.point + ": ") == std::string::npos)
      own += (own.empty() ? "" : ", ") + run.point + ": " + budget_text(run.budget);
  md << "Every run: " << budget_text(plan.budget) << (own.empty() ? "" : " (" + own + ")")
     << "; scored on the dev verses: perplexity per target subword over every dev verse, BLEU and chrF2 of "
     << (plan.scoring.dev_verses == 0        ? std::string("all")
         : plan.scoring.dev_pick == "spread" ? std::to_string(plan.scoring.dev_verses) + " evenly spaced"
                                             : "the first " + std::to_string(plan.scoring.dev_verses))
     << " dev verses translated with ";
  for (std::size_t i = 0; i < decodings.size(); ++i)
    md << (i ? ", " : "") << "beam " << decodings[i].beam << " α " << decodings[i].alpha_text();
  md << ", by "
     << (plan.scoring.average_last > 1
             ? "the average of the last " + std::to_string(plan.scoring.average_last) + " checkpoints"
             : std::string("the last model"))
     << ". Settings are ranked by their mean dev BLEU (beam " << decodings.front().beam << ", α "
     << decodings.front().alpha_text() << ") over seeds.\n\n";
}

// The settings ranked by their mean dev BLEU over seeds, and the seed spread that tells them apart.
void write_ranking(std::ostream& md, const SweepPlan& plan, const std::map<std::string, SweepRunResult>& results) {
  auto points = summarize(plan, results);
  std::vector<const SweepPointSummary*> ranked;
  for (const auto& p : points) ranked.push_back(&p);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) {
    if ((a->finished > 0) != (b->finished > 0)) return a->finished > 0;
    return a->bleu_mean > b->bleu_mean;
  });
  double spread = 0;
  bool spread_measured = false;
  for (const auto& p : points)
    if (p.finished >= 2) spread = std::max(spread, p.bleu_max - p.bleu_min), spread_measured = true;
  md << "## Settings, best first\n\n| setting | seeds finished | dev BLEU (mean) | min–max over seeds | chrF2 (mean) | "
        "dev PPL (mean) |\n|---|---:|---:|---:|---:|---:|\n";
  for (const auto* p : ranked) {
    md << "| " << p->point << " | " << p->finished << " of " << p->runs.size()
       << (p->diverged ? " (" + std::to_string(p->diverged) + " diverged)" : "") << " | ";
    if (p->finished == 0) {
      md << " | | | |\n";
      continue;
    }
    md << (p == ranked.front() ? "**" + format_fixed(p->bleu_mean, 2) + "**" : format_fixed(p->bleu_mean, 2)) << " | "
       << (p->finished >= 2 ? format_fixed(p->bleu_min, 2) + "–" + format_fixed(p->bleu_max, 2)
                            : std::string("one seed"))
       << " | " << format_fixed(p->chrf_mean, 2) << " | " << format_fixed(p->ppl_mean, 2) << " |\n";
  }
  if (spread_measured)
    md << "\nSeed spread: the widest range of dev BLEU between the seeds of one setting is " << format_fixed(spread, 2)
       << "; settings closer than that are not told apart.\n";
  else
    md << "\nNo setting has two finished seeds: the seed spread is not measured.\n";
}

// One row per run (its values, size, updates, speed and scores), then the runs that diverged.
void write_runs(std::ostream& md, const SweepPlan& plan, const std::map<std::string, SweepRunResult>& results) {
  const auto& decodings = plan.scoring.decodings;
  md << "\n## Every run\n\n| run |";
  for (const auto& k : plan.knobs) md << " " << k << " |";
  md << " seed | parameters | updates | minutes | tokens/s | dev PPL |";
  for (const auto& d : decodings) md << " BLEU " << d.label() << " | chrF2 " << d.label() << " |";
  md << "\n|---|";
  for (std::size_t i = 0; i < plan.knobs.size(); ++i) md << "---|";
  md << "---:|---:|---:|---:|---:|---:|";
  for (std::size_t i = 0; i < decodings.size(); ++i) md << "---:|---:|";
  md << "\n";
  std::vector<std::string> diverged;
  for (const auto& run : plan.runs) {
    md << "| " << run.name << " |";
    for (const auto& k : plan.knobs) md << " " << (run.values.contains(k) ? value_text(run.values.at(k)) : "") << " |";
    md << " " << run.seed << " | " << format_fixed(run.parameters / 1e6, 2) << "M |";
    auto it = results.find(run.name);
    if (it == results.end()) {
      md << " not started | | | |";
      for (std::size_t i = 0; i < decodings.size(); ++i) md << " | |";
      md << "\n";
      continue;
    }
    const SweepRunResult& r = it->second;
    md << " " << r.updates << " | " << format_fixed(r.minutes, 1) << " | " << format_fixed(r.tokens_per_second, 0)
       << " |";
    if (r.status == Status::diverged) {
      md << " diverged |";
      diverged.push_back(run.name + ": " + r.diverged_message);
    } else if (r.status == Status::unfinished) {
      md << " running |";
    } else {
      md << " " << format_fixed(r.dev_ppl, 2) << " |";
    }
    for (const auto& d : decodings) {
      auto s = r.decodings.find(d.label());
      if (s == r.decodings.end())
        md << " | |";
      else
        md << " " << format_fixed(s->second.bleu, 2) << " | " << format_fixed(s->second.chrf, 2) << " |";
    }
    md << "\n";
  }
  if (!diverged.empty()) {
    md << "\nDiverged (the training stopped; the sweep went on):\n\n";
    for (const auto& d : diverged) md << "- " << d << "\n";
  }
}

// One chart per varied key: dev BLEU against its values; a line per setting of the other keys
// (mean over seeds), the seeds themselves as circles. Values that are not numbers (variants) are
// categories on the x axis, their means points without a line.
void write_knob_charts(std::ostream& md, std::map<std::string, std::string>& charts, const SweepPlan& plan,
                       const std::map<std::string, SweepRunResult>& results) {
  const std::string first = plan.scoring.decodings.front().label();
  const std::vector<std::string>& colors = inspect::chart_palette();
  if (!plan.knobs.empty()) md << "\n## Dev BLEU against each varied key\n\n";
  for (const auto& knob : plan.knobs) {
    std::vector<Json> values;  // in plan order
    for (const auto& run : plan.runs) {
      const Json& v = run.values.at(knob);
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    const bool numeric = all_numeric(values);
    auto x_of = [&](const Json& v) {
      if (numeric) return v.get<double>();
      return static_cast<double>(std::find(values.begin(), values.end(), v) - values.begin() + 1);
    };
    // The other keys' values name the line.
    std::vector<std::string> lines;
    std::map<std::string, inspect::ChartSeries> mean, seeds;
    std::map<std::string, std::map<double, std::vector<double>>> sums;
    for (const auto& run : plan.runs) {
      std::string others;
      for (auto it = run.values.begin(); it != run.values.end(); ++it)
        if (it.key() != knob) others += (others.empty() ? "" : ", ") + it.key() + "=" + value_text(*it);
      if (others.empty()) others = "dev BLEU";
      if (std::find(lines.begin(), lines.end(), others) == lines.end()) lines.push_back(others);
      auto r = results.find(run.name);
      if (r == results.end() || r->second.status != Status::finished) continue;
      const double x = x_of(run.values.at(knob)), y = r->second.decodings.at(first).bleu;
      sums[others][x].push_back(y);
      seeds[others].points.push_back({x, y});
    }
    std::vector<inspect::ChartSeries> series;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string& name = lines[i];
      const std::string color = colors[i % colors.size()];
      const bool several = plan.seeds.size() > 1;
      inspect::ChartSeries m{several ? name + " (mean of the seeds)" : name, color, false, false, numeric, {}};
      m.filled = several && !numeric;  // categories: points, no line; the mean's filled, the seeds' hollow
      for (const auto& [x, ys] : sums[name]) {
        double s = 0;
        for (double y : ys) s += y;
        m.points.push_back({x, s / static_cast<double>(ys.size())});
      }
      if (m.points.empty()) continue;
      series.push_back(m);
      if (several) {
        inspect::ChartSeries c{name + " (each seed)", color, false, false, false, seeds[name].points};
        std::sort(c.points.begin(), c.points.end());
        series.push_back(c);
      }
    }
    if (series.empty()) continue;
    inspect::ChartOptions o;
    o.title = "dev BLEU against " + knob;
    o.left_label = "dev BLEU (" + first + ")";
    if (numeric) {
      o.x_label = knob;
      double lo = values.front().get<double>(), hi = lo;
      for (const auto& v : values) lo = std::min(lo, v.get<double>()), hi = std::max(hi, v.get<double>());
      o.log2_x = lo > 0 && hi / lo >= 8;
    } else {
      o.x_label = knob;
      for (const auto& v : values) o.x_categories.push_back(value_text(v));
    }
    const std::string file = "knob-" + knob + ".svg";
    charts[file] = inspect::svg_line_chart(series, o);
    md << "![dev BLEU against " << knob << "](knob-" << knob << ".png)\n\n";
  }
}

}  // namespace

SweepReportText sweep_report(const SweepPlan& plan, const std::map<std::string, SweepRunResult>& results,
                             const std::string& setup) {
  std::ostringstream md;
  write_setup(md, plan, setup);
  write_ranking(md, plan, results);
  write_runs(md, plan, results);
  SweepReportText out;
  write_knob_charts(md, out.charts, plan, results);
  out.markdown = md.str();
  return out;
}

SweepReportCounts write_sweep_report(const fs::path& run, const std::string& setup, const std::string& report) {
  const SweepPlan plan = read_planned_sweep(run);
  std::map<std::string, SweepRunResult> results;
  SweepReportCounts counts;
  counts.runs = static_cast<int>(plan.runs.size());
  for (const auto& r : plan.runs) {
    const fs::path folder = run / "runs" / r.name;
    if (!fs::exists(folder / "train")) continue;
    const SweepRunResult result = read_sweep_run(folder, plan);
    counts.finished += result.status == SweepRunResult::Status::finished;
    counts.diverged += result.status == SweepRunResult::Status::diverged;
    results[r.name] = result;
  }
  const SweepReportText text = sweep_report(plan, results, setup);
  for (const auto& [name, svg] : text.charts) {
    write_file_atomic(run / name, svg);
    write_file_atomic(run / fs::path(name).replace_extension(".png"),
                      inspect::render_png(svg, 1.5, (run / name).string()));
  }
  write_file_atomic(run / report, text.markdown);
  return counts;
}

}  // namespace attn::study
