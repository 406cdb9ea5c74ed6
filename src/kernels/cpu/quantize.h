#pragma once
// The activations' side of int8 products (gemm_s8): each row of x quantized on its own to
// kActivationLevels + 1 unsigned levels, x ≈ scale · (q - zero_point).
//
// Why 7 bits and not 8: without AVX512-VNNI (AVX2, e.g. Zen 3) oneDNN's u8·s8 product sums pairs
// of products in 16-bit registers (vpmaddubsw), which saturate at 32767: 255·127·2 overflows,
// 127·127·2 does not. fbgemm (PyTorch's reduce_range) makes the same choice for the same reason.
#include <cstdint>

namespace attn::cpu {

inline constexpr int kActivationLevels = 127;

// Per row r of x [rows, cols] (row stride ld): lo = min(0, min x), hi = max(0, max x),
// scale = (hi - lo) / 127 (1 if hi = lo),
// q = clamp(round_to_even(x · (1 / scale)) + zero_point, 0, 127) with zero_point = round(-lo · (1 / scale))
// (half away from zero); q is [rows, cols] dense.
void quantize_activation_rows(const float* x, std::int64_t rows, int cols, std::int64_t ld, std::uint8_t* q,
                              float* scales, std::int32_t* zero_points);

}  // namespace attn::cpu
