#include "nn/shared_embedding.h"

namespace attn::nn {

void SharedEmbedding::embed(Backend& be, const std::int32_t* ids, int batch, int length,
                            const float* positions, const Dropout& dropout, std::uint64_t site,
                            float* out) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  be.embedding(ids, rows, table, dim, scale, positions, length, out);
  be.dropout(out, out, rows * dim, dropout.rate, dropout.site(site));
}

void SharedEmbedding::embed_backward(Backend& be, const std::int32_t* ids, int batch, int length,
                                     float* d_out, const Dropout& dropout, std::uint64_t site,
                                     float* positions_grad) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  be.dropout(d_out, d_out, rows * dim, dropout.rate, dropout.site(site));
  be.embedding_backward(ids, rows, d_out, dim, scale, table_grad);
  if (positions_grad) be.positions_backward(d_out, batch, length, dim, positions_grad);
}

void SharedEmbedding::project(Backend& be, const float* y, std::int64_t rows, float* logits) const {
  be.gemm(Trans::No, Trans::Yes, static_cast<int>(rows), vocab, dim, 1.0f, y, dim, table, dim, 0.0f,
          logits, vocab);
}

void SharedEmbedding::project_backward(Backend& be, const float* y, std::int64_t rows,
                                       const float* d_logits, float* dy, Bf16* d_logits_bf16) const {
  const int r = static_cast<int>(rows);
  if (d_logits_bf16) {
    be.to_bf16(d_logits, rows * vocab, d_logits_bf16);
    be.gemm_mixed(Trans::No, Trans::No, r, dim, vocab, 1.0f, d_logits_bf16, true, vocab, table, false, dim, 0.0f, dy,
                  dim);
    be.gemm_mixed(Trans::Yes, Trans::No, vocab, dim, r, 1.0f, d_logits_bf16, true, vocab, y, false, dim, 1.0f,
                  table_grad, dim);
    return;
  }
  be.gemm(Trans::No, Trans::No, r, dim, vocab, 1.0f, d_logits, vocab, table, dim, 0.0f, dy, dim);
  be.gemm(Trans::Yes, Trans::No, vocab, dim, r, 1.0f, d_logits, vocab, y, dim, 1.0f, table_grad, dim);
}

}  // namespace attn::nn
