#include "core/token_batch.h"

#include <algorithm>

#include "core/error.h"
#include "core/special_tokens.h"

namespace attn {

void PaddedBatch::assign(int rows, const Tokens& source, const Tokens& target) {
  ATTN_CHECK(rows >= 0, "PaddedBatch::assign: rows >= 0");
  batch = rows;
  src_len = tgt_len = 0;
  for (int b = 0; b < rows; ++b) {
    src_len = std::max(src_len, static_cast<int>(source(b).size()) + 1);
    if (target) tgt_len = std::max(tgt_len, static_cast<int>(target(b).size()) + 1);
  }
  const auto n = static_cast<std::size_t>(rows);
  src.assign(n * static_cast<std::size_t>(src_len), kPadId);
  tgt_in.assign(n * static_cast<std::size_t>(tgt_len), kPadId);
  tgt_out.assign(n * static_cast<std::size_t>(tgt_len), kPadId);
  src_lengths.assign(n, 0);
  tgt_lengths.assign(target ? n : 0, 0);
  src_tokens = tgt_tokens = 0;
  for (int b = 0; b < rows; ++b) {
    const auto x = source(b);
    auto* s = src.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(src_len);
    std::copy(x.begin(), x.end(), s);
    s[x.size()] = kEosId;
    src_lengths[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(x.size()) + 1;
    src_tokens += static_cast<std::int64_t>(x.size()) + 1;
    if (!target) continue;
    const auto y = target(b);
    auto* in = tgt_in.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(tgt_len);
    auto* out = tgt_out.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(tgt_len);
    in[0] = kBosId;
    std::copy(y.begin(), y.end(), in + 1);
    std::copy(y.begin(), y.end(), out);
    out[y.size()] = kEosId;
    tgt_lengths[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(y.size()) + 1;
    tgt_tokens += static_cast<std::int64_t>(y.size()) + 1;
  }
}

PaddedBatch pad_batch(std::span<const std::vector<std::int32_t>> sources,
                      std::span<const std::vector<std::int32_t>> targets) {
  ATTN_CHECK(sources.size() == targets.size(), "pad_batch: as many targets as sources");
  PaddedBatch b;
  b.assign(
      static_cast<int>(sources.size()), [&](int i) { return std::span<const std::int32_t>(sources[i]); },
      [&](int i) { return std::span<const std::int32_t>(targets[i]); });
  return b;
}

PaddedBatch pad_sources(std::span<const std::vector<std::int32_t>> sources) {
  PaddedBatch b;
  b.assign(static_cast<int>(sources.size()), [&](int i) { return std::span<const std::int32_t>(sources[i]); });
  return b;
}

}  // namespace attn
