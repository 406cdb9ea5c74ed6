#include "cli/commands.h"

namespace attn::cli {

void add_vocab_command(CLI::App& app) {
  app.add_subcommand("vocab", "(not yet implemented)");
}

}  // namespace attn::cli
