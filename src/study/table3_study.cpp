#include "study/table3_study.h"

#include <algorithm>
#include <iterator>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_file.h"

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

Table3Settings table3_settings(const Table3Preset& preset, const std::vector<std::string>& rows,
                               const std::optional<std::vector<std::string>>& second_seed, int vocab_size) {
  const auto ids = [](const std::vector<std::string>& items) {
    std::vector<std::string> kept;
    std::copy_if(items.begin(), items.end(), std::back_inserter(kept), [](const auto& id) { return !id.empty(); });
    return kept;
  };
  Table3Settings s;
  s.rows = ids(rows);
  if (s.rows.empty()) s.rows = preset.rows;  // the preset's (none: every row but big)
  if (second_seed) {
    s.second_seed = ids(*second_seed);
  } else {  // the preset's, those of them planned
    for (const auto& id : preset.second_seed)
      if (s.rows.empty() || std::find(s.rows.begin(), s.rows.end(), id) != s.rows.end()) s.second_seed.push_back(id);
  }
  s.scale = Table3Scale{preset.width_divisor, preset.layer_divisor, vocab_size};
  s.training = preset.training;
  return s;
}

Table3Settings read_table3_settings(const fs::path& file) {
  const std::string source = file.string();
  const nlohmann::json j = read_json_file(source, "the Table 3 plan");
  // The ranges `attn table3 plan` takes on its command line.
  const auto whole = [&](const char* key, long long lo, long long hi) {
    return static_cast<int>(json_whole_number(j.at(key), source, key, lo, hi));
  };
  const auto one_of = [&](const char* key, const std::string& fallback, const char* a, const char* b) {
    const std::string v = j.value(key, fallback);
    if (v != a && v != b)
      throw_in(source, std::string("'") + key + "' must be \"" + a + "\" or \"" + b + "\", got " + j.at(key).dump());
    return v;
  };
  Table3Settings s;
  try {
    s.rows = j.at("rows").get<std::vector<std::string>>();
    s.second_seed = j.at("second_seed").get<std::vector<std::string>>();
    s.scale.width_divisor = whole("width_divisor", 1, 1024);
    s.scale.layer_divisor = whole("layer_divisor", 1, 64);
    s.scale.vocab_size = whole("vocab_size", 1, 10000000);
    s.training.steps = whole("steps", 1, 10000000);
    s.training.batch_tokens = whole("batch_tokens", 1, 100000000);
    s.training.warmup_steps = whole("warmup_steps", 1, 10000000);
    s.training.lr_scale = json_number(j.at("lr_scale"), source, "lr_scale", 1e-6, 1e3);
    s.training.bleu_verses = whole("bleu_verses", 0, 1000000000);
    // Studies planned before these settings existed: the first verses, one validation, the paper's decay.
    s.training.bleu_pick = one_of("bleu_pick", "first", "first", "spread");
    s.training.validations = j.contains("validations") ? whole("validations", 1, 10000000) : 1;
    s.training.lr_decay = one_of("lr_decay", "inverse_sqrt", "inverse_sqrt", "linear");
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": not a Table 3 plan (" + e.what() + ")");
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

}  // namespace attn::study
