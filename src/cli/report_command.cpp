// `attn report`: a Markdown report of a training run and its test scores, with the learning
// curve drawn as SVG.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/svg_chart.h"
#include "core/atomic_file.h"
#include "core/clock_text.h"
#include "core/error.h"
#include "core/text_file.h"

namespace attn::cli {
namespace {

struct ReportArguments {
  std::string run, train_dir, title = "attn translation run";
  std::vector<std::string> results;  // "SYSTEM|TEST=bleu.json"
  std::string sample_source, sample_reference;
  std::vector<std::string> samples;  // "SYSTEM=translations"
  int sample_count = 3;
  std::string notes;                 // a Markdown file to include
};

std::pair<std::string, std::string> split_once(const std::string& s, char sep, const std::string& what) {
  const auto at = s.find(sep);
  if (at == std::string::npos) throw Error(what + ": expected '" + std::string(1, sep) + "' in '" + s + "'");
  return {s.substr(0, at), s.substr(at + 1)};
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_in(path, "cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw_in(path, std::string("not valid JSON: ") + e.what());
  }
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The training table: updates, time, speed and the best validation, from train.jsonl's records.
void write_training_section(std::ostream& md, const std::vector<nlohmann::json>& steps,
                            const std::vector<nlohmann::json>& valids, const std::filesystem::path& log) {
  if (steps.empty()) {
    md << "## Training\n\nNo progress records in " << log.string()
       << ": the run was shorter than one logging interval (log_every updates).\n";
    return;
  }
  const auto& last = steps.back();
  double best_ce = 1e300, best_bleu = -1;
  std::int64_t best_step = 0;
  for (const auto& v : valids) {
    if (v["cross_entropy"].get<double>() < best_ce) best_ce = v["cross_entropy"], best_step = v["step"];
    if (v.contains("bleu")) best_bleu = std::max(best_bleu, v["bleu"].get<double>());
  }
  std::vector<double> rates;
  for (const auto& s : steps) rates.push_back(s["tokens_per_second"].get<double>());
  std::sort(rates.begin(), rates.end());
  md << "## Training\n\n![learning curve](learning_curve.svg)\n\n| | |\n|---|---|\n"
     << "| updates | " << last["step"] << " (" << last["epoch"] << " epochs) |\n"
     << "| training time | " << clock_text(last["elapsed_seconds"].get<double>()) << " |\n"
     << "| target tokens seen | " << last["target_tokens"] << " |\n"
     << "| training speed | " << fixed(rates[rates.size() / 2], 0) << " target tokens/s (median over progress windows) |\n";
  if (!valids.empty()) {
    md << "| best dev perplexity | " << fixed(std::exp(best_ce), 2) << " per subword token (cross-entropy "
       << fixed(best_ce, 4) << ", step " << best_step << ") |\n";
    if (best_bleu >= 0) md << "| best dev BLEU (greedy, during training) | " << fixed(best_bleu, 2) << " |\n";
  }
}

void run(const ReportArguments& args) {
  const std::filesystem::path run = args.run;
  const std::filesystem::path train = args.train_dir.empty() ? run / "train" : std::filesystem::path(args.train_dir);
  std::vector<nlohmann::json> steps, valids;
  for (const auto& line : read_text_lines(train / "train.jsonl")) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    (j.value("type", "") == "valid" ? valids : steps).push_back(j);
  }
  const nlohmann::json config = read_json((train / "config.json").string());

  // Learning curve (a run shorter than log_every updates has no records to draw).
  ChartSeries train_loss{"train loss (label-smoothed)", "#1f77b4", false, {}};
  ChartSeries dev_ce{"dev cross-entropy", "#d62728", false, {}};
  ChartSeries dev_bleu{"dev BLEU (greedy)", "#2ca02c", true, {}};
  for (const auto& s : steps) train_loss.points.emplace_back(s["step"].get<double>(), s["loss"].get<double>());
  for (const auto& v : valids) {
    dev_ce.points.emplace_back(v["step"].get<double>(), v["cross_entropy"].get<double>());
    if (v.contains("bleu")) dev_bleu.points.emplace_back(v["step"].get<double>(), v["bleu"].get<double>());
  }
  std::vector<ChartSeries> series{train_loss, dev_ce};
  if (!dev_bleu.points.empty()) series.push_back(dev_bleu);
  if (!steps.empty())
    write_file_atomic(run / "learning_curve.svg",
                      svg_line_chart(series, {"Learning curve", "update step", "nats per target token", "BLEU"}));

  std::ostringstream md;
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
  md << "# " << args.title << "\n\n" << "Generated by `attn report` on " << date << ".\n\n";

  if (!args.results.empty()) {
    md << "## Results on the test verses\n\n| System | Test set | BLEU | chrF2 |\n|---|---|---:|---:|\n";
    std::string bleu_signature, chrf_signature;
    for (const auto& r : args.results) {
      const auto [label, file] = split_once(r, '=', "--result");
      const auto [system, test] = split_once(label, '|', "--result");
      const auto scores = read_json(file);
      std::string bleu = "-", chrf = "-";
      for (const auto& s : scores) {
        if (s["name"] == "BLEU") bleu = fixed(s["score"].get<double>(), 2), bleu_signature = s["signature"];
        else chrf = fixed(s["score"].get<double>(), 2), chrf_signature = s["signature"];
      }
      md << "| " << system << " | " << test << " | " << bleu << " | " << chrf << " |\n";
    }
    md << "\nsacreBLEU signatures: BLEU `" << bleu_signature << "`, chrF2 `" << chrf_signature << "`.\n\n";
  }

  write_training_section(md, steps, valids, train / "train.jsonl");
  md << "\n<details><summary>Effective configuration</summary>\n\n```json\n" << config.dump(2) << "\n```\n</details>\n\n";

  if (!args.samples.empty() && !args.sample_source.empty()) {
    const auto src = read_text_lines(args.sample_source);
    std::vector<std::string> ref;
    if (!args.sample_reference.empty()) ref = read_text_lines(args.sample_reference);
    std::vector<std::pair<std::string, std::vector<std::string>>> systems;
    for (const auto& s : args.samples) {
      const auto [name, file] = split_once(s, '=', "--sample");
      systems.emplace_back(name, read_text_lines(file));
    }
    md << "## Sample translations\n\n";
    for (int i = 0; i < args.sample_count && i < static_cast<int>(src.size()); ++i) {
      md << "- **source:** " << src[i] << "\n";
      if (i < static_cast<int>(ref.size())) md << "  - **reference:** " << ref[i] << "\n";
      for (const auto& [name, lines] : systems)
        if (i < static_cast<int>(lines.size())) md << "  - **" << name << ":** " << lines[i] << "\n";
    }
    md << "\n";
  }
  if (!args.notes.empty())
    for (const auto& line : read_text_lines(args.notes)) md << line << "\n";
  write_file_atomic(run / "report.md", md.str());
  std::cout << "wrote " << (run / "report.md").string()
            << (steps.empty() ? "" : " and " + (run / "learning_curve.svg").string()) << "\n";
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArguments>();
  CLI::App* sub = app.add_subcommand("report", "Write a Markdown report (learning curve SVG, scores, samples) of a run");
  sub->add_option("--run", args->run, "folder to write report.md and learning_curve.svg into")->required();
  sub->add_option("--train-dir", args->train_dir, "the attn train run folder (default RUN/train)");
  sub->add_option("--title", args->title, "report title");
  sub->add_option("--result", args->results, "'SYSTEM|TEST SET=scores.json' from attn bleu --json (repeatable)");
  sub->add_option("--sample-source", args->sample_source, "source text for sample translations");
  sub->add_option("--sample-reference", args->sample_reference, "reference translations for the samples");
  sub->add_option("--sample", args->samples, "'SYSTEM=translations' (repeatable)");
  sub->add_option("--sample-count", args->sample_count, "how many samples")->capture_default_str();
  sub->add_option("--notes", args->notes, "a Markdown file appended to the report");
  sub->callback([args] { run(*args); });
}

}  // namespace attn::cli
