#pragma once
// Beam search (and greedy search, beam 1) over a batch of sentences with incremental decoding.
//
// Each step ranks every (hypothesis, next token) of a sentence by log-probability and keeps the
// best w, where w is the beam size less the hypotheses already finished (the beam shrinks as
// hypotheses end, as in Marian); a kept candidate ending in EOS is finished. A sentence is done
// when no live hypothesis remains, when (early_stop) no live hypothesis can still beat the n-th
// best finished one, or at its maximum length, where EOS is forced. Beam 1 is thus exactly
// greedy search.
#include <cstdint>
#include <vector>

#include "decode/incremental_decoder.h"
#include "decode/search_options.h"

namespace attn {

struct Hypothesis {
  std::vector<std::int32_t> tokens;  // without BOS and EOS
  double log_prob = 0;               // log P(tokens, EOS | source)
  double score = 0;                  // log_prob / lp
  // Only while the decoder has an attention tap: the row this hypothesis' prefix occupied at each
  // step, EOS's step included (tokens.size() + 1 entries), in that step's numbering of rows.
  std::vector<std::int32_t> step_rows;
};

// The GNMT length penalty lp for a hypothesis of `length` tokens (EOS included).
double length_penalty(int length, double alpha);

// sources: token ids without EOS. Returns up to n_best hypotheses per sentence, best first.
std::vector<std::vector<Hypothesis>> beam_search(IncrementalDecoder& decoder,
                                                 const std::vector<std::vector<std::int32_t>>& sources,
                                                 const SearchOptions& options);

}  // namespace attn
