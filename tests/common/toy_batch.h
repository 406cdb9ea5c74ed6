#pragma once
// Small hand-built batches of token ids for model tests, following the model's conventions:
// source = tokens + EOS, target input = BOS + tokens, target output = tokens + EOS, pad = 0.
#include <cstdint>
#include <vector>

#include "core/special_tokens.h"
#include "core/token_batch.h"

namespace attn::testing {

struct ToyBatch {
  std::vector<std::int32_t> src, src_lengths, tgt_in, tgt_out, tgt_lengths;
  int batch = 0, src_len = 0, tgt_len = 0;

  ToyBatch(const std::vector<std::vector<std::int32_t>>& sources, const std::vector<std::vector<std::int32_t>>& targets,
           int pad_src_to = 0, int pad_tgt_to = 0) {
    batch = static_cast<int>(sources.size());
    src_len = pad_src_to;
    tgt_len = pad_tgt_to;
    for (const auto& s : sources) src_len = std::max<int>(src_len, static_cast<int>(s.size()) + 1);
    for (const auto& t : targets) tgt_len = std::max<int>(tgt_len, static_cast<int>(t.size()) + 1);
    src.assign(static_cast<std::size_t>(batch) * src_len, kPadId);
    tgt_in.assign(static_cast<std::size_t>(batch) * tgt_len, kPadId);
    tgt_out.assign(static_cast<std::size_t>(batch) * tgt_len, kPadId);
    for (int b = 0; b < batch; ++b) {
      const auto& s = sources[b];
      const auto& t = targets[b];
      for (std::size_t i = 0; i < s.size(); ++i) src[b * src_len + i] = s[i];
      src[b * src_len + s.size()] = kEosId;
      src_lengths.push_back(static_cast<std::int32_t>(s.size()) + 1);
      tgt_in[b * tgt_len] = kBosId;
      for (std::size_t i = 0; i < t.size(); ++i) {
        tgt_in[b * tgt_len + i + 1] = t[i];
        tgt_out[b * tgt_len + i] = t[i];
      }
      tgt_out[b * tgt_len + t.size()] = kEosId;
      tgt_lengths.push_back(static_cast<std::int32_t>(t.size()) + 1);
    }
  }

  TokenBatch view() const {
    return {batch, src_len, tgt_len, src.data(), src_lengths.data(), tgt_in.data(), tgt_out.data(), tgt_lengths.data()};
  }
};

}  // namespace attn::testing
