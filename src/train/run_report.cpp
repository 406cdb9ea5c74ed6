#include "train/run_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/clock_text.h"
#include "core/number_format.h"
#include "core/error.h"
#include "core/json_file.h"
#include "core/text_file.h"
#include "eval/sacrebleu_json.h"
#include "inspect/svg_chart.h"
#include "train/checkpoint.h"

namespace attn {
namespace {

double number(const nlohmann::json& j, const char* key) { return j.at(key).get<double>(); }

// The training table: updates, time, speed and the best validation. The run's end is where its
// newest checkpoint was saved (it stops with one), when that is later than the last progress record.
void write_training_section(std::ostream& md, const TrainingLog& log, const std::filesystem::path& path,
                            const std::optional<TrainingProgress>& saved) {
  if (log.train.empty()) {
    md << "## Training\n\nNo progress records in " << path.string()
       << ": the run was shorter than one logging interval (log_every updates).\n";
    return;
  }
  const auto& record = log.train.back();
  std::int64_t updates = record.at("step").get<std::int64_t>(), epochs = record.value("epoch", std::int64_t{0}),
               tokens = record.value("target_tokens", std::int64_t{0});
  double seconds = number(record, "elapsed_seconds");
  if (saved && saved->step >= updates)
    updates = saved->step, epochs = saved->epoch + 1, tokens = saved->target_tokens, seconds = saved->elapsed_seconds;
  double best_ce = 1e300, best_bleu = -1;
  std::int64_t best_step = 0;
  for (const auto& v : log.valid) {
    if (number(v, "cross_entropy") < best_ce) best_ce = number(v, "cross_entropy"), best_step = v.at("step");
    if (v.contains("bleu")) best_bleu = std::max(best_bleu, number(v, "bleu"));
  }
  std::vector<double> rates;
  for (const auto& s : log.train) rates.push_back(number(s, "tokens_per_second"));
  std::sort(rates.begin(), rates.end());
  md << "## Training\n\n![learning curve](learning_curve.svg)\n\n| | |\n|---|---|\n"
     << "| updates | " << updates << " (" << epochs << " epochs) |\n"
     << "| training time | " << clock_text(seconds) << " |\n"
     << "| target tokens seen | " << tokens << " |\n"
     << "| training speed | " << format_fixed(rates[rates.size() / 2], 0)
     << " target tokens/s (median over progress windows) |\n";
  if (!log.valid.empty()) {
    md << "| best dev perplexity | " << format_fixed(std::exp(best_ce), 2) << " per subword token (cross-entropy "
       << format_fixed(best_ce, 4) << ", step " << best_step << ") |\n";
    if (best_bleu >= 0) md << "| best dev BLEU (greedy, during training) | " << format_fixed(best_bleu, 2) << " |\n";
  }
}

std::string learning_curve(const TrainingLog& log) {
  using inspect::ChartSeries;
  ChartSeries train_loss{"train loss (label-smoothed)", inspect::chart_palette()[0], false, false, true, {}};
  ChartSeries dev_ce{"dev cross-entropy", inspect::chart_palette()[1], false, false, true, {}};
  ChartSeries dev_bleu{"dev BLEU (greedy)", inspect::chart_palette()[2], true, false, true, {}};
  for (const auto& s : log.train) train_loss.points.emplace_back(number(s, "step"), number(s, "loss"));
  for (const auto& v : log.valid) {
    dev_ce.points.emplace_back(number(v, "step"), number(v, "cross_entropy"));
    if (v.contains("bleu")) dev_bleu.points.emplace_back(number(v, "step"), number(v, "bleu"));
  }
  std::vector<ChartSeries> series{train_loss, dev_ce};
  if (!dev_bleu.points.empty()) series.push_back(dev_bleu);
  inspect::ChartOptions options;
  options.title = "Learning curve";
  options.x_label = "update step";
  options.left_label = "nats per target token";
  options.right_label = "BLEU";
  return inspect::svg_line_chart(series, options);
}

}  // namespace

void truncate_training_log(const std::filesystem::path& path, std::int64_t step) {
  if (!std::filesystem::exists(path)) return;
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      if (nlohmann::json::parse(line).value("step", std::int64_t{0}) > step) continue;
    } catch (const nlohmann::json::exception&) {
      continue;  // a record torn by the kill
    }
    kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

TrainingLog read_training_log(const std::filesystem::path& path) {
  TrainingLog log;
  const std::vector<std::string> lines = read_text_lines(path);
  // A run killed while writing a record leaves its last line without an end: that line alone may
  // be torn.
  bool ends_with_newline = true;
  if (std::ifstream in(path, std::ios::binary | std::ios::ate); in && in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    ends_with_newline = in.get() == '\n';
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded() && i + 1 == lines.size() && !ends_with_newline) {
      log.torn_last_line = true;
      continue;
    }
    if (j.is_discarded() || !j.is_object())
      throw_at(path.string(), i + 1, "not a JSON object (train.jsonl holds one record per line)");
    const std::string type = j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
    if (type != "train" && type != "valid") throw_at(path.string(), i + 1, "\"type\" must be \"train\" or \"valid\"");
    const std::vector<const char*> keys =
        type == "train" ? std::vector<const char*>{"step", "loss", "tokens_per_second", "elapsed_seconds"}
                        : std::vector<const char*>{"step", "cross_entropy"};
    for (const char* key : keys)
      if (!j.contains(key) || !j[key].is_number())
        throw_at(path.string(), i + 1, std::string("\"") + key + "\" must be a number");
    for (const char* key : {"bleu", "epoch", "target_tokens"})
      if (j.contains(key) && !j[key].is_number())
        throw_at(path.string(), i + 1, std::string("\"") + key + "\" must be a number");
    (type == "valid" ? log.valid : log.train).push_back(j);
  }
  return log;
}

RunReport build_run_report(const RunReportOptions& o, const std::string& date) {
  const std::filesystem::path train = o.train_dir.empty() ? o.run / "train" : o.train_dir;
  const TrainingLog log = read_training_log(train / "train.jsonl");
  const nlohmann::json config = read_json_file((train / "config.json").string(), "the run's configuration");
  RunReport report;
  if (!log.train.empty()) report.learning_curve_svg = learning_curve(log);

  std::ostringstream md;
  md << "# " << o.title << "\n\n"
     << "Generated by `attn report` on " << date << ".\n\n";
  if (!o.results.empty()) {
    md << "## Results on the test verses\n\n| System | Test set | BLEU | chrF2 |\n|---|---|---:|---:|\n";
    std::string bleu_signature, chrf_signature;
    for (const auto& r : o.results) {
      std::string bleu = "-", chrf = "-";
      for (const eval::ScoreRecord& s : eval::read_score_file(r.scores)) {
        if (s.name == "BLEU")
          bleu = format_fixed(s.score, 2), bleu_signature = s.signature;
        else if (s.name.starts_with("chrF"))
          chrf = format_fixed(s.score, 2), chrf_signature = s.signature;
      }
      md << "| " << r.system << " | " << r.test_set << " | " << bleu << " | " << chrf << " |\n";
    }
    md << "\nsacreBLEU signatures: BLEU `" << bleu_signature << "`, chrF2 `" << chrf_signature << "`.\n\n";
  }
  write_training_section(md, log, train / "train.jsonl", last_checkpoint_progress(train / "checkpoints"));
  if (log.torn_last_line)
    md << "\nThe last line of " << (train / "train.jsonl").string()
       << " is an incomplete record (the run stopped while writing it) and is left out.\n";
  md << "\n<details><summary>Effective configuration</summary>\n\n```json\n"
     << config.dump(2) << "\n```\n</details>\n\n";

  if (!o.samples.empty() && !o.sample_source.empty()) {
    const auto src = read_text_lines(o.sample_source);
    std::vector<std::string> ref;
    if (!o.sample_reference.empty()) ref = read_text_lines(o.sample_reference);
    std::vector<std::pair<std::string, std::vector<std::string>>> systems;
    for (const auto& s : o.samples) systems.emplace_back(s.system, read_text_lines(s.translations));
    md << "## Sample translations\n\n";
    for (int i = 0; i < o.sample_count && i < static_cast<int>(src.size()); ++i) {
      const auto k = static_cast<std::size_t>(i);
      md << "- **source:** " << src[k] << "\n";
      if (k < ref.size()) md << "  - **reference:** " << ref[k] << "\n";
      for (const auto& [name, lines] : systems)
        if (k < lines.size()) md << "  - **" << name << ":** " << lines[k] << "\n";
    }
    md << "\n";
  }
  if (!o.notes.empty())
    for (const auto& line : read_text_lines(o.notes)) md << line << "\n";
  report.markdown = md.str();
  return report;
}

}  // namespace attn
