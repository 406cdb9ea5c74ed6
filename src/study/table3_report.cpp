#include "study/table3_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/number_format.h"
#include "core/error.h"
#include "inspect/svg_chart.h"
#include "study/sweep_report.h"

namespace attn::study {
namespace {

namespace fs = std::filesystem;
using inspect::ChartOptions;
using inspect::ChartSeries;

// The cells of the row that differ from `base`, at our scale, as the paper writes them.
std::string changed_cells(const ModelConfig& c, const ModelConfig& base) {
  std::vector<std::string> cells;
  if (c.encoder_layers != base.encoder_layers) cells.push_back("N=" + std::to_string(c.encoder_layers));
  if (c.d_model != base.d_model) cells.push_back("d_model=" + std::to_string(c.d_model));
  if (c.d_ff != base.d_ff) cells.push_back("d_ff=" + std::to_string(c.d_ff));
  if (c.heads != base.heads) cells.push_back("h=" + std::to_string(c.heads));
  if (c.d_k != base.d_k && c.d_v != base.d_v && c.d_k == c.d_v)
    cells.push_back("d_k=d_v=" + std::to_string(c.d_k));
  else {
    if (c.d_k != base.d_k) cells.push_back("d_k=" + std::to_string(c.d_k));
    if (c.d_v != base.d_v) cells.push_back("d_v=" + std::to_string(c.d_v));
  }
  if (c.dropout != base.dropout) cells.push_back("P_drop=" + format_fixed(c.dropout, 1));
  if (c.label_smoothing != base.label_smoothing) cells.push_back("ε_ls=" + format_fixed(c.label_smoothing, 1));
  if (c.positions != base.positions) cells.push_back("learned positions");
  std::string out;
  for (const auto& s : cells) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string all_cells(const ModelConfig& c) {
  return "N=" + std::to_string(c.encoder_layers) + ", d_model=" + std::to_string(c.d_model) +
         ", d_ff=" + std::to_string(c.d_ff) + ", h=" + std::to_string(c.heads) + ", d_k=" + std::to_string(c.d_k) +
         ", d_v=" + std::to_string(c.d_v) + ", P_drop=" + format_fixed(c.dropout, 1) +
         ", ε_ls=" + format_fixed(c.label_smoothing, 1);
}

std::optional<double> ppl(const Table3Results& r, const std::string& name) {
  auto it = r.results.find(name);
  if (it == r.results.end()) return std::nullopt;
  return it->second.dev_ppl;
}

std::optional<double> bleu(const Table3Results& r, const std::string& name) {
  auto it = r.results.find(name);
  if (it == r.results.end()) return std::nullopt;
  return it->second.dev_bleu;
}

// Base's training time at its steady pace.
double base_seconds(const RunResult& base) { return base.seconds_per_update * base.steps; }

// The equal-time perplexity of every finished run, against base's (seed 1) training time.
std::optional<double> equal_time_ppl(const Table3Results& r, const std::string& name) {
  auto it = r.results.find(name), base = r.results.find("base");
  if (it == r.results.end() || base == r.results.end()) return std::nullopt;
  if (it->second.seconds_per_update <= 0 || base->second.seconds_per_update <= 0) return std::nullopt;  // no pace
  const auto reading = equal_time_reading(it->second, base_seconds(base->second));
  if (!reading) return std::nullopt;
  return reading->dev_ppl;
}

using Metric = std::optional<double> (*)(const Table3Results&, const std::string&);

// "x is worse than y" in one reading: perplexity (higher is worse, relative differences weighed
// against a relative spread) or BLEU (lower is worse, points against points).
TrendReading worse(const Table3Results& r, Metric metric, bool higher_is_worse, double spread, const std::string& x,
                   const std::string& x_label, const std::string& y, const std::string& y_label) {
  TrendReading v{"", r.results.count(x) && r.results.count(y) ? "not measured" : "not run"};
  const auto px = metric(r, x), py = metric(r, y);
  if (!px || !py) return v;
  double diff = 0;
  if (higher_is_worse) {
    diff = (*px - *py) / *py;
    v.evidence = x_label + " " + format_fixed(*px, 2) + " vs " + y_label + " " + format_fixed(*py, 2) + " (" +
                 (diff >= 0 ? "+" : "") + format_fixed(100 * diff, 1) + "%)";
  } else {
    diff = *py - *px;
    v.evidence = x_label + " " + format_fixed(*px, 2) + " vs " + y_label + " " + format_fixed(*py, 2) + " (" +
                 (*px - *py >= 0 ? "+" : "") + format_fixed(*px - *py, 2) + ")";
  }
  if (spread > 0 && std::abs(diff) <= spread)
    v.verdict = "within the spread";
  else
    v.verdict = diff > 0 ? "agrees" : "disagrees";
  return v;
}

TrendVerdict trend(const Table3Results& r, std::string claim, const std::string& x, const std::string& x_label,
                   const std::string& y, const std::string& y_label) {
  const double s = seed_spread(r), b = seed_spread_bleu(r);
  return {std::move(claim), worse(r, ppl, true, s, x, x_label, y, y_label),
          worse(r, bleu, false, b, x, x_label, y, y_label), worse(r, equal_time_ppl, true, s, x, x_label, y, y_label)};
}

// "x about equal to y": agrees when within the spread.
void about_equal(TrendReading& v, double spread) {
  if (v.verdict == "within the spread")
    v.verdict = "agrees";
  else if (v.verdict != "not run" && v.verdict != "not measured")
    v.verdict = spread > 0 ? "disagrees" : "no spread measured";
}

}  // namespace

std::optional<double> last_quarter_change(const RunResult& run) {
  return last_quarter_change(run.dev_curve, run.steps);
}

std::optional<EqualTimeReading> equal_time_reading(const RunResult& run, double base_seconds) {
  EqualTimeReading out;
  if (run.seconds_per_update * run.steps <= 1.02 * base_seconds) {
    out.update = run.steps;
    out.dev_ppl = run.dev_ppl;
    return out;
  }
  const double update = base_seconds / run.seconds_per_update;
  const auto ce = value_at_update(run.dev_curve, update);
  if (!ce) return std::nullopt;
  out.update = update;
  out.dev_ppl = std::exp(*ce);
  out.read_earlier = true;
  return out;
}

namespace {
double spread_of(const Table3Results& r, Metric metric, bool relative) {
  double spread = 0;
  for (const auto& run : r.plan) {
    if (run.seed == 1) continue;
    const auto a = metric(r, run.row->id), b = metric(r, run.name);
    if (a && b) spread = std::max(spread, relative ? std::abs(*a - *b) / std::min(*a, *b) : std::abs(*a - *b));
  }
  return spread;
}
}  // namespace

double seed_spread(const Table3Results& r) { return spread_of(r, ppl, true); }
double seed_spread_bleu(const Table3Results& r) { return spread_of(r, bleu, false); }

std::vector<TrendVerdict> trend_verdicts(const Table3Results& r) {
  std::vector<TrendVerdict> v;
  v.push_back(trend(r, "a single head is worse than 8 (A)", "A1", "h=1", "base", "h=8"));
  // Too many heads: h=32 against the best of 4, 8 and 16 (by perplexity at equal updates).
  std::string best = "base", best_label = "h=8";
  for (const auto& [id, label] : {std::pair{"A2", "h=4"}, std::pair{"A3", "h=16"}}) {
    const auto p = ppl(r, id), b = ppl(r, best);
    if (p && (!b || *p < *b)) best = id, best_label = label;
  }
  v.push_back(
      trend(r, "too many heads are worse (A: h=32 against the best of h=4, 8, 16)", "A4", "h=32", best, best_label));
  v.push_back(trend(r, "a smaller key size d_k hurts (B: d_k/4 against base)", "B1", "B1", "base", "base"));
  // Named by the paper's sizes; ours are scaled (N 1/3/4, d_model 64/128/256, d_ff 256/1024).
  v.push_back(trend(r, "deeper is better (C: N=2 against base's 6)", "C1", "C1", "base", "base"));
  v.push_back(trend(r, "deeper is better (C: base's N=6 against 8)", "base", "base", "C3", "C3"));
  v.push_back(trend(r, "wider is better (C: d_model=256 against base's 512)", "C4", "C4", "base", "base"));
  v.push_back(trend(r, "wider is better (C: base's d_model=512 against 1024)", "base", "base", "C5", "C5"));
  v.push_back(trend(r, "a wider feed-forward layer is better (C: d_ff=1024 against 4096)", "C6", "C6", "C7", "C7"));
  v.push_back(trend(r, "dropout helps (D: P_drop 0.0 against 0.1)", "D1", "P_drop=0.0", "base", "P_drop=0.1"));
  v.push_back(
      trend(r, "label smoothing hurts perplexity (D: ε_ls 0.1 against 0.0)", "base", "ε_ls=0.1", "D3", "ε_ls=0.0"));
  v.push_back(trend(r, "label smoothing helps BLEU (D: ε_ls 0.0 against 0.1)", "D3", "ε_ls=0.0", "base", "ε_ls=0.1"));
  // Learned positions about equal to sinusoids: agrees when the difference is within the spread.
  TrendVerdict e = trend(r, "learned positions are as good as sinusoids (E)", "E1", "learned", "base", "sinusoidal");
  about_equal(e.ppl, seed_spread(r));
  about_equal(e.bleu, seed_spread_bleu(r));
  about_equal(e.equal_time, seed_spread(r));
  v.push_back(e);
  // The paper's last row: big, trained three times base's updates (as the paper's 300K against 100K), is the best.
  v.push_back(
      trend(r, "the big model is best (big, at its 3× longer budget, against base)", "base", "base", "big", "big"));
  return v;
}

namespace {

// Every run beside the paper's row: what it changes, its size, dev scores, pace and machine.
void write_results(std::ostream& md, const Table3Results& r, const Table3Scale& scale, const ModelConfig& base) {
  md << "## Results\n\n"
     << "Dev perplexity is per subword of our " << scale.vocab_size
     << "-piece BPE vocabulary and dev BLEU is on our dev verses; the paper's are per wordpiece of its 37000-token "
        "vocabulary on newstest2013 (English-German): compare "
        "directions, not values. Empty cells: as base. Parameters include the shared embedding.\n\n"
     << "*Last quarter*: how much the dev perplexity still moved over the run's last quarter of updates "
        "(from its validations). *Pace*: the run's seconds per update over base's, both measured by short trainings "
        "side by side on the machine the run finished on, so that runs finished on different machines compare; "
        "*at base's time*: the dev perplexity at the training time base takes for its updates at that pace: a run "
        "slower than base is read from its learning curve at the update it reaches in that time (in brackets); a "
        "faster run keeps its value at its last update, an upper bound. *Machine*: where the run finished (listed "
        "below the table).\n\n"
     << "| run | the paper's change | ours | steps | params | dev PPL | last quarter | dev BLEU | pace | machine | "
        "at base's time | paper: params | PPL | BLEU "
        "|\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n";
  std::vector<std::string> machines;  // in order of first appearance: M1, M2, ...
  const auto machine_tag = [&](const std::string& m) {
    auto it = std::find(machines.begin(), machines.end(), m);
    if (it == machines.end()) it = machines.insert(machines.end(), m);
    return "M" + std::to_string(it - machines.begin() + 1);
  };
  for (const auto& run : r.plan) {
    const Table3Row& row = *run.row;
    const std::string ours = row.id == "base" ? all_cells(run.model) : changed_cells(run.model, base);
    md << "| " << run.name << " | " << (row.change.empty() ? "(base)" : row.change) << " | " << ours << " | "
       << run.steps << " | " << format_fixed(run.model.parameter_count() / 1e6, 2) << "M | ";
    auto it = r.results.find(run.name);
    if (it == r.results.end()) {
      md << "not run | | | | | | ";
    } else {
      const RunResult& x = it->second;
      const auto change = last_quarter_change(x);
      md << format_fixed(x.dev_ppl, 2) << " | " << (change ? format_fixed(100 * *change, 1) + "%" : "") << " | "
         << format_fixed(x.dev_bleu, 2) << " | "
         << (x.seconds_per_update > 0 ? format_fixed(x.seconds_per_update, 2) + "×" : "not measured") << " | "
         << (x.machine.empty() ? "" : machine_tag(x.machine)) << " | ";
      auto base_it = r.results.find("base");
      const auto eq = base_it == r.results.end() ? std::nullopt : equal_time_reading(x, base_seconds(base_it->second));
      if (eq)
        md << format_fixed(eq->dev_ppl, 2)
           << (eq->read_earlier ? " (" + std::to_string(static_cast<long>(std::lround(eq->update))) + ")" : "");
      md << " | ";
    }
    const PaperResult& p = row.paper;
    md << (p.params_millions > 0 ? format_fixed(p.params_millions, 0) + "M" : "") << " | " << format_fixed(p.ppl, 2)
       << " | " << format_fixed(p.bleu, 1) << " |\n";
  }
  if (!machines.empty()) {
    md << "\n";
    for (std::size_t m = 0; m < machines.size(); ++m)
      md << (m ? "; " : "Machines: ") << "M" << m + 1 << " " << machines[m];
    md << ".\n";
  }
}

// The rows trained with two seeds, and the spread they give as the yardstick of every verdict.
void write_spread(std::ostream& md, const Table3Results& r) {
  const double spread = seed_spread(r);
  md << "\n## Run-to-run spread\n\n";
  bool any = false;
  for (const auto& run : r.plan) {
    if (run.seed == 1) continue;
    const auto a = r.results.find(run.row->id), b = r.results.find(run.name);
    if (a == r.results.end() || b == r.results.end()) continue;
    if (!any)
      md << "| row | seed 1 PPL | seed " << run.seed << " PPL | difference | seed 1 BLEU | seed 2 BLEU |\n"
         << "|---|---:|---:|---:|---:|---:|\n";
    any = true;
    const double rel = std::abs(a->second.dev_ppl - b->second.dev_ppl) / std::min(a->second.dev_ppl, b->second.dev_ppl);
    md << "| " << run.row->id << " | " << format_fixed(a->second.dev_ppl, 2) << " | "
       << format_fixed(b->second.dev_ppl, 2) << " | " << format_fixed(100 * rel, 1) << "% | "
       << format_fixed(a->second.dev_bleu, 2) << " | " << format_fixed(b->second.dev_bleu, 2) << " |\n";
  }
  if (any)
    md << "\nThe largest difference between two seeds of one row, " << format_fixed(100 * spread, 1)
       << "% of the perplexity, is the spread: a difference between rows no larger than it is not taken as real.\n";
  else
    md << "No row has run with a second seed yet: differences between rows cannot be told from noise.\n";
  const double bleu_spread = seed_spread_bleu(r);
  if (any) md << "The BLEU spread, the same way: " << format_fixed(bleu_spread, 2) << " points.\n";
}

// Has base learnt? The study's own test of its scale (docs/table3.md): dev BLEU >= 25 and a dev
// perplexity that moved by less than 3% over the last quarter of its updates.
void write_base_learnt(std::ostream& md, const Table3Results& r) {
  if (auto b = r.results.find("base"); b != r.results.end()) {
    const auto change = last_quarter_change(b->second);
    md << "\n## Has base learnt?\n\nBase ends at dev BLEU " << format_fixed(b->second.dev_bleu, 2)
       << (b->second.dev_bleu >= 25 ? " (at least 25: yes)" : " (at least 25: no)");
    if (change)
      md << "; its dev perplexity moved by " << format_fixed(100 * *change, 1) << "% over its last quarter of updates ("
         << (*change < 0.03 ? "under 3%: yes" : "under 3%: no") << ").\n";
    else
      md << "; its learning curve has no validation at three quarters of its updates to tell how much it still "
            "moves.\n";
  }
}

// A verdict on each of the paper's trends, read three ways.
void write_trends(std::ostream& md, const Table3Results& r) {
  md << "\n## The paper's trends at this scale\n\nEach finding read three ways: dev perplexity and BLEU at equal "
        "updates (the paper's reading), and dev perplexity at base's training time (a CPU's other fair reading). "
        "*Agrees*: the difference goes the paper's way by more than the seed spread; *disagrees*: the other way by "
        "more than the spread.\n\n"
     << "| the paper's finding | dev PPL | verdict | dev BLEU | verdict | PPL at base's time | verdict |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const auto& v : trend_verdicts(r))
    md << "| " << v.claim << " | " << v.ppl.evidence << " | " << v.ppl.verdict << " | " << v.bleu.evidence << " | "
       << v.bleu.verdict << " | " << v.equal_time.evidence << " | " << v.equal_time.verdict << " |\n";
}

// One chart per group: our dev perplexity against the knob (left axis), the paper's (right, dashed).
void write_charts(std::ostream& md, std::map<std::string, std::string>& charts_out, const Table3Results& r) {
  struct Knob {
    std::string group, knob, title, x_label;
    bool log2_x;
  };
  const std::vector<std::vector<Knob>> charts = {
      {{"A", "h", "(A) heads at constant computation (h x d_k = d_model)", "heads h", true}},
      {{"B", "d_k", "(B) attention key size", "d_k (ours)", true}},
      {{"C", "N", "(C) model size: layers", "", false},
       {"C", "d_model", "(C) model size: d_model", "", false},
       {"C", "d_ff", "(C) model size: d_ff", "", false}},
      {{"D", "P_drop", "(D) regularisation: dropout", "", false}, {"D", "eps_ls", "label smoothing", "", false}},
      {{"E", "positions", "(E) positions: 0 sinusoidal, 1 learned", "positions: 0 sinusoidal, 1 learned", false}}};
  const std::vector<std::string>& colors = inspect::chart_palette();
  md << "\n## Dev perplexity against each knob\n\nSolid: ours (left axis); dashed: the paper's (right axis); "
        "circles without a line: a second seed.\n\n";
  for (const auto& group : charts) {
    const std::string g = group.front().group;
    std::vector<ChartSeries> series;
    ChartOptions o;
    o.title = g == "C" ? "(C) model size" : g == "D" ? "(D) dropout and label smoothing" : group.front().title;
    o.x_label = g == "C" ? "parameters of our model (millions)" : g == "D" ? "P_drop or ε_ls" : group.front().x_label;
    o.left_label = "our dev perplexity";
    o.right_label = "the paper's dev perplexity";
    o.log2_x = group.front().log2_x;
    for (std::size_t k = 0; k < group.size(); ++k) {
      const Knob& knob = group[k];
      const std::string label = group.size() > 1 ? knob.knob : "attn (ours)";
      ChartSeries ours{label, colors[k], false, false, true, {}};
      ChartSeries paper{"paper: " + knob.knob, colors[k], true, true, true, {}};
      ChartSeries seed2{label + ", second seed", colors[k], false, false, false, {}};
      for (const auto& run : r.plan) {
        if (run.row->id != "base" && (run.row->group != g || run.row->knob != knob.knob)) continue;
        const double x = g == "C" ? run.model.parameter_count() / 1e6 : knob_value(knob.knob, run.model);
        auto it = r.results.find(run.name);
        if (run.seed == 1) {
          if (it != r.results.end()) ours.points.push_back({x, it->second.dev_ppl});
          paper.points.push_back({x, run.row->paper.ppl});
        } else if (it != r.results.end() && (run.row->id != "base" || k == 0)) {
          seed2.points.push_back({x, it->second.dev_ppl});  // base's second seed once per chart
        }
      }
      for (auto* s : {&ours, &paper, &seed2}) {
        std::sort(s->points.begin(), s->points.end());
        if (!s->points.empty()) series.push_back(*s);
      }
    }
    const std::string file = "group-" + g + ".svg";
    charts_out[file] = inspect::svg_line_chart(series, o);
    md << "![group " << g << "](group-" << g << ".png)\n\n";
  }
}

// How every run was trained and scored.
void write_method(std::ostream& md, const Table3Training& training) {
  md << "## How it was run\n\n"
     << "Each run trains for the same number of updates (" << training.steps << ", batches of " << training.batch_tokens
     << " source and " << training.batch_tokens << " target tokens, the paper's learning rate times "
     << format_fixed(training.lr_scale, 2) << " with warmup " << training.warmup_steps
     << (training.lr_decay == "linear" ? ", then down in a straight line to 0 at the last update" : "")
     << ", fp32) from its seed, validating " << training.validations
     << (training.validations == 1 ? " time" : " times, evenly spaced")
     << "; its last model is scored on every dev verse (perplexity by forced decoding, "
        "without label smoothing) and translates "
     << (training.bleu_verses == 0 ? std::string("the dev verses")
         : training.bleu_pick == "spread"
             ? std::to_string(training.bleu_verses) + " dev verses evenly spaced over the set"
             : "the first " + std::to_string(training.bleu_verses) + " dev verses")
     << " with beam 4 and α 0.6, scored by attn bleu (sacreBLEU's BLEU). No checkpoint averaging, as the paper for "
        "Table 3. The study is a sweep (docs/sweep.md); each finished run leaves a record (`runs/<row>.seed<k>/`: its "
        "configuration, machine, pace, training log and dev scores with their signatures), and this report is built "
        "from the records alone.\n";
}

}  // namespace

Table3ReportText table3_report(const Table3Results& r, const Table3Scale& scale, const Table3Training& training,
                               const std::string& setup) {
  Table3ReportText out;
  const ModelConfig base = scaled(table3_row("base").model, scale);
  std::ostringstream md;
  md << "# The paper's Table 3 at small scale\n\n" << setup << "\n";
  write_results(md, r, scale, base);
  write_spread(md, r);
  write_base_learnt(md, r);
  write_trends(md, r);
  write_charts(md, out.charts, r);
  write_method(md, training);
  out.markdown = md.str();
  return out;
}

}  // namespace attn::study
