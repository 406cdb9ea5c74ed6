#include "cli/commands.h"

namespace attn::cli {

void add_bleu_command(CLI::App& app) {
  app.add_subcommand("bleu", "(not yet implemented)");
}

}  // namespace attn::cli
