// `attn heatmap`: placeholder, being written.
#include "cli/commands.h"

namespace attn::cli {

void add_heatmap_command(CLI::App& app) { app.add_subcommand("heatmap", "(being written)"); }

}  // namespace attn::cli
