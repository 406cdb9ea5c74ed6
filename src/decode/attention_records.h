#pragma once
// The attention record (inspect/attention_record.h) of each kind of decoding result, built one way:
// what `attn translate/score --attention` write, what /v1 returns, what alignments are read from.
#include <cstdint>
#include <string>
#include <vector>

#include "decode/beam_search.h"
#include "decode/forced_decoding.h"
#include "inspect/attention_record.h"

namespace attn::data {
class Vocabulary;
}

namespace attn {

// A translation's best hypothesis (n_best: best first). An empty n_best (an empty text) gives a
// record with no target pieces but EOS, scores 0 and the attention given (none).
inspect::AttentionRecord translation_record(const data::Vocabulary& vocabulary, std::int64_t line, std::string source,
                                            std::string target, const std::vector<std::int32_t>& source_ids,
                                            const std::vector<Hypothesis>& n_best,
                                            std::vector<inspect::AttentionMatrix> attention);

// A given target forced through the model: its log-probability is also its score.
inspect::AttentionRecord forced_decoding_record(const data::Vocabulary& vocabulary, std::int64_t line,
                                                std::string source, std::string target,
                                                const std::vector<std::int32_t>& source_ids,
                                                const std::vector<std::int32_t>& target_ids, ForcedDecoding result);

}  // namespace attn
