#pragma once
// The decoder's distribution computed the slow, obviously right way: the whole model over the
// source and BOS + prefix (no cache, no padding), log-softmax in double. The decode tests compare
// the incremental decoder and beam search with it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/toy_batch.h"
#include "model/transformer.h"

namespace attn::testing {

// log P(token | source, prefix[0..position)) for every token; position defaults to the whole prefix
// (the next token's distribution).
inline std::vector<double> recomputed_log_probs(Transformer& m, const std::vector<std::int32_t>& source,
                                                const std::vector<std::int32_t>& prefix, int position = -1) {
  const int V = m.config().vocab_size;
  const ToyBatch batch({source}, {prefix});
  const auto logits = m.logits(batch.view());
  const std::size_t t = position < 0 ? prefix.size() : static_cast<std::size_t>(position);
  const float* row = logits.data() + t * static_cast<std::size_t>(V);
  double mx = row[0], sum = 0;
  for (int v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
  for (int v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
  std::vector<double> out(static_cast<std::size_t>(V));
  for (int v = 0; v < V; ++v) out[static_cast<std::size_t>(v)] = row[v] - mx - std::log(sum);
  return out;
}

}  // namespace attn::testing
