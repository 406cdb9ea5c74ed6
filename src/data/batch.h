#pragma once
// One training batch in host memory: the pairs laid out as core/token_batch.h describes (source +
// EOS, BOS + target, target + EOS, padded with kPadId), and where each pair came from.
#include <cstddef>
#include <vector>

#include "core/token_batch.h"

namespace attn::data {

struct Batch : PaddedBatch {
  // [batch] line of each pair in the corpus files (from 1): for messages, and to put translations
  // back in corpus order.
  std::vector<std::size_t> line_numbers;
};

}  // namespace attn::data
