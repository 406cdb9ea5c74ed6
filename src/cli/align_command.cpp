// `attn align`: placeholder, being written.
#include "cli/commands.h"

namespace attn::cli {

void add_align_command(CLI::App& app) { app.add_subcommand("align", "(being written)"); }

}  // namespace attn::cli
