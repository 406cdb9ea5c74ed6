#pragma once
// float32 <-> bfloat16 blocks for the mixed-precision kernels (bf16_conversion.cpp).
#include <cstdint>

#include "kernels/backend.h"

namespace attn::cpu {

// A rows × cols block stored with leading dimension ld, rounded to nearest even (as the
// AVX512-BF16 instructions do) into a packed bf16 block.
void convert_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, Bf16* dst);
// A bf16 block (leading dimension ld) back to float, exactly, packed.
void widen_bf16(const Bf16* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, float* dst);

}  // namespace attn::cpu
