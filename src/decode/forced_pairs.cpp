#include "decode/forced_pairs.h"

#include "core/error.h"
#include "core/text_file.h"
#include "decode/attention_records.h"

namespace attn {

inspect::AttentionRecord ForcedPairs::record(const LoadedModel& model, std::size_t i) const {
  return forced_decoding_record(*model.vocabulary, static_cast<std::int64_t>(i) + 1, source_lines[i], target_lines[i],
                                source_ids[i], target_ids[i], results[i]);
}

ForcedPairs force_decode_files(const LoadedModel& model, const std::string& source, const std::string& target,
                               int batch_sentences, const AttentionSelection* selection) {
  if (batch_sentences <= 0) throw Error("--batch-sentences must be at least 1");
  ForcedPairs p;
  p.source_lines = read_text_lines(source);
  p.target_lines = read_text_lines(target);
  if (p.source_lines.size() != p.target_lines.size())
    throw Error(source + " has " + std::to_string(p.source_lines.size()) + " lines but " + target + " has " +
                std::to_string(p.target_lines.size()));
  p.source_ids = model.vocabulary->encode_lines(p.source_lines);
  p.target_ids = model.vocabulary->encode_lines(p.target_lines);
  const std::size_t limit = static_cast<std::size_t>(model.model->config().max_positions - 1);
  for (std::size_t i = 0; i < p.source_ids.size(); ++i) {
    if (p.source_ids[i].size() > limit || p.target_ids[i].size() > limit)
      throw_at(p.source_ids[i].size() > limit ? source : target, i + 1,
               "longer than the model's " + std::to_string(limit) + " tokens");
  }
  p.results = force_decode(*model.model, p.source_ids, p.target_ids, batch_sentences, selection);
  return p;
}

std::vector<inspect::AttentionRecord> forced_cross_attention_records(const LoadedModel& model,
                                                                     const std::string& source,
                                                                     const std::string& target, int batch_sentences) {
  const AttentionSelection cross;  // the default: cross-attention, every layer and head
  const ForcedPairs pairs = force_decode_files(model, source, target, batch_sentences, &cross);
  std::vector<inspect::AttentionRecord> records;
  records.reserve(pairs.results.size());
  for (std::size_t i = 0; i < pairs.results.size(); ++i) records.push_back(pairs.record(model, i));
  return records;
}

}  // namespace attn
