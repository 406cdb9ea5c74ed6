// attn: the Transformer of "Attention Is All You Need" for machine translation.
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"attn: train and run Transformer translation models (Vaswani et al., 2017)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "attn 0.1.0");
  attn::cli::add_corpus_command(app);
  attn::cli::add_vocab_command(app);
  attn::cli::add_train_command(app);
  attn::cli::add_average_command(app);
  attn::cli::add_translate_command(app);
  attn::cli::add_shortlist_command(app);
  attn::cli::add_quantize_command(app);
  attn::cli::add_score_command(app);
  attn::cli::add_bleu_command(app);
  attn::cli::add_report_command(app);
  attn::cli::add_heatmap_command(app);
  attn::cli::add_align_command(app);
  attn::cli::add_serve_command(app);
  attn::cli::add_table3_command(app);
  attn::cli::add_sweep_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const attn::cli::QuietFailure&) {
    return 1;
  } catch (const attn::Error& e) {
    std::cerr << "attn: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "attn: unexpected error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
