#pragma once
// A Table 3 study's folder: its settings (plan.json, kept from the first plan: a study goes on only
// with the settings it started with), the sweep file scripts/sweep runs, and the report written
// from the runs finished so far. What `attn table3 plan|report` do, without the command line.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/table3.h"

namespace attn::study {

// Everything that makes a study's runs comparable: the rows, the second seeds, the scale and the
// training (not the thread count: a study may go on with another).
struct Table3Settings {
  std::vector<std::string> rows;  // empty: every row but big
  std::vector<std::string> second_seed;
  Table3Scale scale;
  Table3Training training;
};

// A preset's settings for the rows asked for (empty: every row but big) with the vocabulary's
// size: its second seeds are those of the rows planned, unless second_seed gives the list. Empty
// ids (a script's empty list, "a,,b") are left out.
Table3Settings table3_settings(const Table3Preset& preset, const std::vector<std::string>& rows,
                               const std::optional<std::vector<std::string>>& second_seed, int vocab_size);

// plan.json's form of the settings, and back. Reading throws Error naming the file; keys added
// since the first studies (bleu_pick, validations, lr_decay) default to what those studies did.
nlohmann::json table3_settings_json(const Table3Settings& s);
Table3Settings read_table3_settings(const std::filesystem::path& plan_json);

// Writes RUN/plan.json (or, when it exists, refuses settings other than its own, naming both) and
// the study as a sweep file, RUN/table3-sweep.json, whose path it returns.
std::filesystem::path plan_table3_study(const std::filesystem::path& run, const Table3Settings& s);

}  // namespace attn::study
