#pragma once
// The one embedding matrix E [vocab, d_model] the paper shares between the source embedding, the
// target embedding and the pre-softmax projection (section 3.4): inputs are E[id]·√d_model plus
// the position's encoding, logits are y·Eᵀ.
#include <cstdint>

#include "kernels/backend.h"
#include "nn/dropout.h"
#include "nn/linear.h"

namespace attn::nn {

struct SharedEmbedding {
  // E [vocab, dim] as stored: float (f32_matrix(e, dim): training), or s8 rows with their scales
  // (inference with int8 weights), for the lookup and the projection alike.
  MatrixRef table{};
  float* table_grad = nullptr;
  int vocab = 0, dim = 0;
  float scale = 1;               // √d_model
  float* lookup_grad = nullptr;  // where the lookups' gradient goes, if not into table_grad

  // out [B·T, dim] = dropout(E[ids]·scale + positions[t]); positions [≥T, dim].
  void embed(Backend& be, const std::int32_t* ids, int batch, int length, const float* positions,
             const Dropout& dropout, std::uint64_t site, float* out) const;
  // d_out is consumed (dropout applied in place); E's gradient (lookup_grad, else table_grad) and,
  // if given, the learned positions' gradient are accumulated.
  void embed_backward(Backend& be, const std::int32_t* ids, int batch, int length, float* d_out, const Dropout& dropout,
                      std::uint64_t site, float* positions_grad) const;

  // The pre-softmax projection as a layer: weight E, no bias.
  Linear output_layer() const;
  // logits [rows, vocab] = y [rows, dim] · Eᵀ (y in float, with its bf16 rounding where kept)
  void project(Backend& be, Activations y, std::int64_t rows, float* logits) const;
  // dy = d_logits · E (overwritten); E's gradient += d_logitsᵀ · y. d_logits in float, or in
  // bf16 (as the loss writes it where the backend keeps bf16 activations).
  void project_backward(Backend& be, Activations y, std::int64_t rows, Activations d_logits, float* dy) const;
};

}  // namespace attn::nn
