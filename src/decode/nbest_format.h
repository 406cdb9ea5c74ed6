#pragma once
// Moses' n-best list format, as `attn translate --n-best N` (N above 1) writes it: a line per
// hypothesis, "sentence ||| text ||| score", the sentence numbered from 0, the score the search's
// (log-probability over the length penalty), best first.
#include <cstddef>
#include <string>
#include <vector>

#include "decode/beam_search.h"

namespace attn {

// The lines of one sentence's hypotheses, each ending in "\n"; texts[h] is hypotheses[h]
// detokenised. No hypotheses (an empty input line) give no lines.
std::string format_nbest(std::size_t sentence, const std::vector<std::string>& texts,
                         const std::vector<Hypothesis>& hypotheses);

}  // namespace attn
