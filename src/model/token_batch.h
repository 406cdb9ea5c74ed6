#pragma once
// The model's view of a batch of sentence pairs, in host memory. Sequences are padded with the
// pad id to the batch's longest: source = tokens + EOS, target input = BOS + tokens, target
// output = tokens + EOS. Lengths count the real (non-pad) positions.
#include <cstdint>

namespace attn {

struct TokenBatch {
  int batch = 0;       // sentences
  int src_len = 0;     // S: padded source length
  int tgt_len = 0;     // T: padded target length
  const std::int32_t* src = nullptr;          // [batch, S]
  const std::int32_t* src_lengths = nullptr;  // [batch]
  const std::int32_t* tgt_in = nullptr;       // [batch, T]
  const std::int32_t* tgt_out = nullptr;      // [batch, T]
  const std::int32_t* tgt_lengths = nullptr;  // [batch]
};

}  // namespace attn
