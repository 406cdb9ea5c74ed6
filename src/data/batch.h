#pragma once
// One training batch in host memory, laid out the way the model reads it.
//
// Token conventions (the model relies on them), for each sentence pair b < batch_size:
//   src[b]     = source tokens + EOS            length src_len[b]
//   tgt_in[b]  = BOS + target tokens            length tgt_len[b]   (decoder input)
//   tgt_out[b] = target tokens + EOS            length tgt_len[b]   (what the decoder must predict)
// Each row is padded with kPadId (= 0) up to the batch's longest: source_length columns for src,
// target_length columns for tgt_in and tgt_out. Matrices are row-major: element (b, t) of src
// is src[b * source_length + t]. Ids are those of vocabulary.h.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn::data {

struct Batch {
  std::size_t batch_size = 0;     // B: sentence pairs
  std::size_t source_length = 0;  // S: longest src_len
  std::size_t target_length = 0;  // T: longest tgt_len

  std::vector<std::int32_t> src;      // [B x S]
  std::vector<std::int32_t> tgt_in;   // [B x T]
  std::vector<std::int32_t> tgt_out;  // [B x T]
  std::vector<std::int32_t> src_len;  // [B] real tokens of each src row, EOS included
  std::vector<std::int32_t> tgt_len;  // [B] real tokens of each tgt_in / tgt_out row

  // [B] line of each pair in the corpus files (from 1): for messages, and to put translations
  // back in corpus order.
  std::vector<std::size_t> line_numbers;

  std::size_t source_tokens = 0;  // sum of src_len: non-pad entries of src
  std::size_t target_tokens = 0;  // sum of tgt_len: non-pad entries of tgt_out (the loss's tokens)
};

}  // namespace attn::data
