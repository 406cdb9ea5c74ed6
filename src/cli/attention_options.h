#pragma once
// The options that choose which attentions `attn translate` and `attn score` export.
#include <CLI/CLI.hpp>
#include <string>

#include "decode/attention_export.h"

namespace attn::cli {

struct AttentionArguments {
  std::string file;             // --attention: JSON Lines output ("" = none)
  std::string kinds = "cross";  // --attention-kinds
  std::string layers = "all";   // --attention-layers
  std::string heads = "all";    // --attention-heads
  AttentionSelection selection() const;
  bool given_without_file() const {  // a choice of kinds, layers or heads, but no file to write
    return file.empty() && (kinds != "cross" || layers != "all" || heads != "all");
  }
};

void add_attention_options(CLI::App* command, AttentionArguments& args);

}  // namespace attn::cli
