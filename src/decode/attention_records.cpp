#include "decode/attention_records.h"

#include "decode/attention_export.h"

namespace attn {

inspect::AttentionRecord translation_record(const data::Vocabulary& vocabulary, std::int64_t line, std::string source,
                                            std::string target, const std::vector<std::int32_t>& source_ids,
                                            const std::vector<Hypothesis>& n_best,
                                            std::vector<inspect::AttentionMatrix> attention) {
  const Hypothesis* best = n_best.empty() ? nullptr : &n_best.front();
  return make_attention_record(vocabulary, line, std::move(source), std::move(target), source_ids,
                               best ? best->tokens : std::vector<std::int32_t>{}, best ? best->log_prob : 0.0,
                               best ? best->score : 0.0, std::move(attention));
}

inspect::AttentionRecord forced_decoding_record(const data::Vocabulary& vocabulary, std::int64_t line,
                                                std::string source, std::string target,
                                                const std::vector<std::int32_t>& source_ids,
                                                const std::vector<std::int32_t>& target_ids, ForcedDecoding result) {
  return make_attention_record(vocabulary, line, std::move(source), std::move(target), source_ids, target_ids,
                               result.log_prob, result.log_prob, std::move(result.attention));
}

}  // namespace attn
