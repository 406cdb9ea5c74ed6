#pragma once
// Sentence pairs as the model reads them, and the one place that lays them out.
//
// For each sentence b < batch:
//   src[b]     = source tokens + EOS     src_lengths[b] real positions
//   tgt_in[b]  = BOS + target tokens     tgt_lengths[b] real positions  (the decoder's input)
//   tgt_out[b] = target tokens + EOS     tgt_lengths[b] real positions  (what it must predict)
// Rows are padded with kPadId to the batch's longest: src_len columns for src, tgt_len columns
// for tgt_in and tgt_out; matrices are row-major (element (b, t) of src is src[b * src_len + t]).
// Everywhere in attn, `src_len` / `tgt_len` is that padded width and `*_lengths` the per-row
// counts of real positions (EOS included).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace attn {

// The model's view of a batch: pointers into host memory laid out as above.
struct TokenBatch {
  int batch = 0;                              // sentences
  int src_len = 0;                            // S: padded source width
  int tgt_len = 0;                            // T: padded target width
  const std::int32_t* src = nullptr;          // [batch, S]
  const std::int32_t* src_lengths = nullptr;  // [batch]
  const std::int32_t* tgt_in = nullptr;       // [batch, T]
  const std::int32_t* tgt_out = nullptr;      // [batch, T]
  const std::int32_t* tgt_lengths = nullptr;  // [batch]
};

// The storage behind a TokenBatch. assign() reuses the vectors' memory from batch to batch.
struct PaddedBatch {
  using Tokens = std::function<std::span<const std::int32_t>(int row)>;

  int batch = 0;
  int src_len = 0;
  int tgt_len = 0;
  std::vector<std::int32_t> src, src_lengths, tgt_in, tgt_out, tgt_lengths;
  std::int64_t src_tokens = 0;  // sum of src_lengths
  std::int64_t tgt_tokens = 0;  // sum of tgt_lengths: the loss's tokens

  // Lays out `rows` pairs, source(row) and target(row) without BOS/EOS. Without `target`, only
  // the sources (as a search reads them): tgt_len is 0 and the target vectors are empty.
  void assign(int rows, const Tokens& source, const Tokens& target = nullptr);
  TokenBatch view() const {
    return {batch, src_len, tgt_len, src.data(), src_lengths.data(), tgt_in.data(), tgt_out.data(), tgt_lengths.data()};
  }
};

// A batch of whole sentences, the rows of `sources` and `targets`.
PaddedBatch pad_batch(std::span<const std::vector<std::int32_t>> sources,
                      std::span<const std::vector<std::int32_t>> targets);
PaddedBatch pad_sources(std::span<const std::vector<std::int32_t>> sources);

}  // namespace attn
