#pragma once
// The options that choose which attentions `attn translate` and `attn score` export, and the
// forced decoding of given sentence pairs shared by `attn score` and `attn align --model`.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "decode/attention_export.h"
#include "decode/forced_decoding.h"
#include "decode/model_directory.h"

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

// Given sentence pairs, forced-decoded, with their attention records when a selection is given.
struct ForcedPairs {
  std::vector<std::string> source_lines, target_lines;
  std::vector<std::vector<std::int32_t>> source_ids, target_ids;
  std::vector<ForcedDecoding> results;
  // Record of pair i (line i + 1): target text as given, score = log-probability.
  inspect::AttentionRecord record(const LoadedModel& model, std::size_t i) const;
};

// Reads both files (line-aligned; each line within the model's length, else an error naming the
// file and line) and decodes them.
ForcedPairs force_decode_files(const LoadedModel& model, const std::string& source, const std::string& target,
                               int batch_sentences, const AttentionSelection* selection);

}  // namespace attn::cli
