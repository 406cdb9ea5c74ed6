#pragma once
// Activations a layer reads: float, or bf16 where the backend keeps bf16 activations
// (Backend::keeps_bf16_activations). The element type travels with the pointer, so a layer has
// one forward and one backward whatever its input's type.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "kernels/backend.h"

namespace attn::nn {

struct Activations {
  const void* data = nullptr;
  DType dtype = DType::f32;
  // f32 only, optional: the same rows rounded to bf16 (to_bf16), which the products that round
  // their inputs read instead (MatrixRef::rounded): rows rounded once for all their products.
  const Bf16* rounded = nullptr;
  Activations() = default;
  Activations(const float* x) : data(x), dtype(DType::f32) {}  // NOLINT: converts by design
  Activations(const Bf16* x) : data(x), dtype(DType::bf16) {}  // NOLINT: converts by design
  Activations(const void* x, DType type) : data(x), dtype(type) {}
  Activations(const float* x, const Bf16* rounded_x) : data(x), dtype(DType::f32), rounded(rounded_x) {}

  // The float rows (a residual connection or a layer norm reads them).
  const float* f32() const {
    ATTN_CHECK(dtype == DType::f32 && data, "these activations are kept in bf16 only; float rows are needed here");
    return static_cast<const float*>(data);
  }
  // As a product's operand: rows ld elements apart.
  MatrixRef matrix(std::int64_t ld, Trans trans = Trans::No) const {
    MatrixRef m{data, dtype, ld, trans};
    m.rounded = rounded;
    return m;
  }
  // The same activations `elements` further on.
  Activations offset(std::int64_t elements) const {
    Activations moved = *this;
    moved.data = static_cast<const char*>(data) + elements * static_cast<std::int64_t>(element_bytes(dtype));
    if (rounded) moved.rounded = rounded + elements;
    return moved;
  }
};

// A writable buffer of rows whose element type travels with it, as Activations' does: float, or
// bf16 where the backend keeps bf16 activations. What one pass keeps for a later one (attention's
// projections, the feed-forward hidden layer), or the type a gradient is read in (Linear::backward).
struct RowBuffer {
  void* data = nullptr;
  DType dtype = DType::f32;
  RowBuffer() = default;
  RowBuffer(float* x) : data(x), dtype(DType::f32) {}  // NOLINT: converts by design
  RowBuffer(Bf16* x) : data(x), dtype(DType::bf16) {}  // NOLINT: converts by design
  Activations read() const { return {data, dtype}; }
};

// Rows a product wrote in float (x, n elements) as the later passes read them: `kept` is x itself
// (float activations), or a bf16 buffer x is rounded into once (the backend keeps bf16 activations;
// x's float buffer may then be shared by all layers as their working copy).
inline Activations keep(Backend& be, const float* x, std::int64_t n, RowBuffer kept) {
  if (kept.dtype == DType::f32) {
    ATTN_CHECK(kept.data == x, "rows kept in float are the product's output itself");
    return x;
  }
  ATTN_CHECK(kept.dtype == DType::bf16 && kept.data, "rows are kept in float or in a bf16 buffer");
  be.to_bf16(x, n, static_cast<Bf16*>(kept.data));
  return kept.read();
}

// Rows written in float that products read next: with their bf16 rounding made once into `rounded`
// where given (training with bf16 activations), as they are where not.
inline Activations with_rounding(Backend& be, const float* x, std::int64_t n, Bf16* rounded) {
  if (!rounded) return x;
  be.to_bf16(x, n, rounded);
  return {x, rounded};
}

}  // namespace attn::nn
