#pragma once
// Each subcommand of `attn` lives in its own file and registers itself on the app here.
#include <CLI/CLI.hpp>

namespace attn::cli {

// Thrown to exit with status 1 when the error has already been told (by another rank of the job).
struct QuietFailure {};

void add_corpus_command(CLI::App& app);
void add_vocab_command(CLI::App& app);
void add_bleu_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_average_command(CLI::App& app);
void add_translate_command(CLI::App& app);
void add_score_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_heatmap_command(CLI::App& app);
void add_align_command(CLI::App& app);
void add_serve_command(CLI::App& app);

}  // namespace attn::cli
