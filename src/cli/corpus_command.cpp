#include "cli/commands.h"

namespace attn::cli {

void add_corpus_command(CLI::App& app) {
  app.add_subcommand("corpus", "(not yet implemented)");
}

}  // namespace attn::cli
