#include "cli/attention_options.h"

#include "core/error.h"

namespace attn::cli {

std::optional<AttentionSelection> AttentionArguments::requested() const {
  if (file.empty()) {
    if (kinds != "cross" || layers != "all" || heads != "all")
      throw Error(
          "--attention-kinds, --attention-layers and --attention-heads choose what --attention FILE writes: "
          "give --attention FILE");
    return std::nullopt;
  }
  AttentionSelection s;
  parse_attention_kinds(kinds, s);
  s.layers = parse_index_list("--attention-layers", layers);
  s.heads = parse_index_list("--attention-heads", heads);
  return s;
}

void add_attention_options(CLI::App* command, AttentionArguments& args) {
  command->add_option("--attention", args.file,
                      "write each sentence's attention weights here, one JSON record per line "
                      "(docs/attention-format.md)");
  command
      ->add_option("--attention-kinds", args.kinds,
                   "attentions to export: cross, decoder_self, encoder_self (comma-separated) or all")
      ->capture_default_str();
  command->add_option("--attention-layers", args.layers, "layers to export, e.g. 0,2 (from 0), or all")
      ->capture_default_str();
  command->add_option("--attention-heads", args.heads, "heads to export, e.g. 1,3 (from 0), or all")
      ->capture_default_str();
}

}  // namespace attn::cli
