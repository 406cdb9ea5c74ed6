#pragma once
// Activations a layer reads: float, or bf16 where the backend keeps bf16 activations
// (Backend::keeps_bf16_activations). The element type travels with the pointer, so a layer has
// one forward and one backward whatever its input's type.
#include <cstddef>
#include <cstdint>

#include "kernels/backend.h"

namespace attn::nn {

struct Activations {
  const void* data = nullptr;
  DType dtype = DType::f32;
  Activations() = default;
  Activations(const float* x) : data(x), dtype(DType::f32) {}  // NOLINT: converts by design
  Activations(const Bf16* x) : data(x), dtype(DType::bf16) {}  // NOLINT: converts by design

  // As a product's operand: rows ld elements apart.
  MatrixRef matrix(std::int64_t ld, Trans trans = Trans::No) const { return {data, dtype, ld, trans}; }
  // The same activations `elements` further on.
  Activations offset(std::int64_t elements) const {
    Activations moved = *this;
    moved.data = static_cast<const char*>(data) + elements * static_cast<std::int64_t>(element_bytes(dtype));
    return moved;
  }
};

}  // namespace attn::nn
