#pragma once
// Each subcommand of `attn` lives in its own file and registers itself on the app here.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "cli/shared_options.h"

namespace attn::cli {

// A number in [lo, hi], finite (CLI::Range lets NaN through: every comparison with it is false).
inline CLI::Validator finite_in(double lo, double hi) {
  char range[96];
  std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
  const std::string text_range = range;
  return CLI::Validator(
      [lo, hi, text_range](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (used != text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(v) || v < lo || v > hi) return "value " + text + " not in " + text_range;
        return "";
      },
      "NUMBER in " + text_range);
}

// Thrown to exit with status 1 when the error has already been told (by another rank of the job).
struct QuietFailure {};

void add_corpus_command(CLI::App& app);
void add_vocab_command(CLI::App& app);
void add_bleu_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_average_command(CLI::App& app);
void add_translate_command(CLI::App& app);
void add_shortlist_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_score_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_heatmap_command(CLI::App& app);
void add_align_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_table3_command(CLI::App& app);
void add_sweep_command(CLI::App& app);

}  // namespace attn::cli
