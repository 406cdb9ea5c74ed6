#pragma once
// The options that choose which attentions `attn translate` and `attn score` export.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "decode/attention_export.h"

namespace attn::cli {

struct AttentionArguments {
  std::string file;             // --attention: JSON Lines output ("" = none)
  std::string kinds = "cross";  // --attention-kinds
  std::string layers = "all";   // --attention-layers
  std::string heads = "all";    // --attention-heads
  // What --attention FILE asks for; nullopt without a file. A choice of kinds, layers or heads
  // without a file to write is refused (an Error naming the options).
  std::optional<AttentionSelection> requested() const;
};

void add_attention_options(CLI::App* command, AttentionArguments& args);

}  // namespace attn::cli
