#include "nn/shared_embedding.h"

namespace attn::nn {

void SharedEmbedding::embed(Backend& be, const std::int32_t* ids, int batch, int length, const float* positions,
                            const Dropout& dropout, std::uint64_t site, float* out) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  be.embedding(ids, rows, table, dim, scale, positions, length, out);
  be.dropout(out, out, rows * dim, dropout.rate, dropout.site(site));
}

void SharedEmbedding::embed_backward(Backend& be, const std::int32_t* ids, int batch, int length, float* d_out,
                                     const Dropout& dropout, std::uint64_t site, float* positions_grad) const {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * length;
  be.dropout(d_out, d_out, rows * dim, dropout.rate, dropout.site(site));
  be.embedding_backward(ids, rows, d_out, dim, scale, lookup_grad ? lookup_grad : table_grad);
  if (positions_grad) be.positions_backward(d_out, batch, length, dim, positions_grad);
}

Linear SharedEmbedding::output_layer() const {
  return Linear{table, nullptr, table_grad, nullptr, dim, vocab};  // logits = y·Eᵀ: E is [out, in]
}

void SharedEmbedding::project(Backend& be, Activations y, std::int64_t rows, float* logits) const {
  output_layer().forward(be, y, rows, logits);
}

void SharedEmbedding::project_backward(Backend& be, Activations y, std::int64_t rows, Activations d_logits,
                                       float* dy) const {
  output_layer().backward(be, y, d_logits, rows, dy, /*accumulate_dx=*/false);
}

}  // namespace attn::nn
