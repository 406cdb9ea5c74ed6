#include "study/table3_study.h"

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_file.h"
#include "inspect/png_render.h"
#include "study/table3_report.h"

namespace attn::study {

namespace fs = std::filesystem;

nlohmann::json table3_settings_json(const Table3Settings& s) {
  return {{"rows", s.rows},
          {"second_seed", s.second_seed},
          {"width_divisor", s.scale.width_divisor},
          {"layer_divisor", s.scale.layer_divisor},
          {"vocab_size", s.scale.vocab_size},
          {"steps", s.training.steps},
          {"batch_tokens", s.training.batch_tokens},
          {"warmup_steps", s.training.warmup_steps},
          {"lr_scale", s.training.lr_scale},
          {"lr_decay", s.training.lr_decay},
          {"bleu_verses", s.training.bleu_verses},
          {"bleu_pick", s.training.bleu_pick},
          {"validations", s.training.validations}};
}

Table3Settings read_table3_settings(const fs::path& file) {
  const nlohmann::json j = read_json_file(file.string(), "the Table 3 plan");
  Table3Settings s;
  try {
    s.rows = j.at("rows").get<std::vector<std::string>>();
    s.second_seed = j.at("second_seed").get<std::vector<std::string>>();
    s.scale.width_divisor = j.at("width_divisor").get<int>();
    s.scale.layer_divisor = j.at("layer_divisor").get<int>();
    s.scale.vocab_size = j.at("vocab_size").get<int>();
    s.training.steps = j.at("steps").get<int>();
    s.training.batch_tokens = j.at("batch_tokens").get<int>();
    s.training.warmup_steps = j.at("warmup_steps").get<int>();
    s.training.lr_scale = j.at("lr_scale").get<double>();
    s.training.bleu_verses = j.at("bleu_verses").get<int>();
    // Studies planned before these settings existed: the first verses, one validation, the paper's decay.
    s.training.bleu_pick = j.value("bleu_pick", std::string("first"));
    s.training.validations = j.value("validations", 1);
    s.training.lr_decay = j.value("lr_decay", std::string("inverse_sqrt"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.string() + ": not a Table 3 plan (" + e.what() + ")");
  }
  return s;
}

fs::path plan_table3_study(const fs::path& run, const Table3Settings& s) {
  const auto runs = table3_plan(s.rows, s.second_seed, s.scale, s.training);
  const fs::path plan_file = run / "plan.json";
  const nlohmann::json settings = table3_settings_json(s);
  if (fs::exists(plan_file)) {
    // An interrupted study goes on only with the settings it started with: its finished runs
    // would not be comparable with new ones otherwise.
    const nlohmann::json before = read_json_file(plan_file.string(), "the Table 3 plan");
    if (before != settings)
      throw Error(plan_file.string() + ": this study was planned with other settings (" + before.dump() + "; now " +
                  settings.dump() + "): use another --run folder, or the same settings");
  } else {
    fs::create_directories(run);
    write_file_atomic(plan_file, settings.dump(1) + "\n");
  }
  const fs::path sweep = run / "table3-sweep.json";
  write_file_atomic(sweep, table3_sweep(runs, s.training, s.scale.vocab_size).dump(1) + "\n");
  return sweep;
}

Table3ReportCounts write_table3_report(const fs::path& run, const std::string& setup) {
  const Table3Settings s = read_table3_settings(run / "plan.json");
  Table3Results results;
  results.plan = table3_plan(s.rows, s.second_seed, s.scale, s.training);
  if (fs::exists(run / "sweep.json")) {
    const SweepPlan sweep = read_planned_sweep(run);
    for (const auto& r : results.plan)
      if (auto result = read_run_result(run, sweep, r)) results.results[r.name] = *result;
  }
  const auto text = table3_report(results, s.scale, s.training, setup);
  for (const auto& [name, svg] : text.charts) {
    write_file_atomic(run / name, svg);
    const std::string png = fs::path(name).replace_extension(".png").string();
    write_file_atomic(run / png, inspect::render_png(svg, 1.5, (run / name).string()));
  }
  write_file_atomic(run / "report.md", text.markdown);
  return {results.results.size(), results.plan.size(), text.charts.size()};
}

}  // namespace attn::study
