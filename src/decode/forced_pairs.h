#pragma once
// Forced decoding of sentence pairs given as two line-aligned text files, shared by `attn score`
// and `attn align --model`: the files read and checked, the pairs decoded, and their attention
// records made.
#include <cstdint>
#include <string>
#include <vector>

#include "decode/attention_export.h"
#include "decode/forced_decoding.h"
#include "decode/model_directory.h"
#include "inspect/attention_record.h"

namespace attn {

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

// The records of every pair with all the model's cross-attention (every layer and head): the
// attention that word alignment reads.
std::vector<inspect::AttentionRecord> forced_cross_attention_records(const LoadedModel& model,
                                                                     const std::string& source,
                                                                     const std::string& target, int batch_sentences);

}  // namespace attn
