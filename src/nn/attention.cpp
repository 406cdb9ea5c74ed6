#include "nn/attention.h"

namespace attn::nn {

AttentionBlocks attention_blocks(const AttentionShape& s, HeadsView q, HeadsView k, HeadsView v) {
  AttentionBlocks a;
  a.batch = s.batch, a.heads = s.heads, a.d_k = s.d_k, a.d_v = s.d_v, a.queries = s.queries, a.keys = s.keys;
  a.q = q.matrix(), a.k = k.matrix(), a.v = v.matrix();
  a.q_stride = q.batch_stride, a.k_stride = k.batch_stride, a.v_stride = v.batch_stride;
  return a;
}

}  // namespace attn::nn
